import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { docker } from "@aps/testkit";
import type { Manifest } from "../../ops/chart-tools.js";
import { dataOf } from "./env.js";

/**
 * A pod's volumes as `docker run` arguments: emptyDir → tmpfs; configMap and secret → their
 * files written under the run's work folder and bind-mounted read-only; a StatefulSet's
 * volumeClaimTemplates and persistentVolumeClaim → named volumes `aps-rehearsal-<run>-…`.
 */

/** What {@link volumeArgs} needs from the run. */
export interface VolumeContext {
  /** The run's id: in every name and label this run creates. */
  runId: string;
  /** A host folder for this run's ConfigMap and Secret files. */
  workDir: string;
  /** The rendered objects (ConfigMaps and Secrets by name). */
  objects: readonly Manifest[];
}

type Volume = {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  configMap?: { name: string; items?: Array<{ key: string; path: string }>; optional?: boolean };
  secret?: { secretName: string; items?: Array<{ key: string; path: string }>; optional?: boolean };
  persistentVolumeClaim?: { claimName: string };
};
type Mount = { name: string; mountPath: string; readOnly?: boolean; subPath?: string };

/** A Kubernetes quantity (`256Mi`, `1Gi`, `512M`, `1000`) in bytes. Throws on another form. */
export function quantityBytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`quantity ${q} is not supported`);
  const unit: Record<string, number> = {
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    k: 1e3,
    K: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
  };
  return Math.round(Number(m[1]) * (m[2] ? unit[m[2]]! : 1));
}

/** The name of the Docker volume behind claim `claim` of pod `pod` (`<claim>-<pod>`, as a StatefulSet names its PVCs). */
export function claimVolumeName(runId: string, claim: string): string {
  return `aps-rehearsal-${runId}-${claim}`;
}

function writeFiles(
  dir: string,
  data: Record<string, string>,
  items: Array<{ key: string; path: string }> | undefined,
  adapt: (file: string, text: string) => string,
) {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  const files = items ?? Object.keys(data).map((key) => ({ key, path: key }));
  for (const { key, path } of files) {
    if (!(key in data)) throw new Error(`key ${key} is missing from a mounted ConfigMap/Secret`);
    const file = join(dir, path);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, adapt(path, data[key]!), { mode: 0o644 });
  }
}

/** The pod whose volumes {@link volumeArgs} mounts. */
export interface PodVolumes {
  podName: string;
  volumes: readonly Volume[];
  /** The container's volumeMounts. */
  mounts: readonly Mount[];
  /** A StatefulSet's volumeClaimTemplates. */
  claimTemplates?: ReadonlyArray<{ metadata: { name: string } }>;
  /** Rewrites each mounted ConfigMap/Secret file's text for the local image (ImageAdapter.adaptFile). */
  adaptFile?: (file: string, text: string) => string;
  /**
   * Numeric owner of its emptyDirs (the container's user, the pod's fsGroup): Docker copies a
   * path the image has onto the tmpfs with the image's mode and root as owner, where Kubernetes
   * gives an emptyDir mode 0777 (fsGroup-owned); owning it makes it writable the same way.
   */
  owner?: { uid: number; gid: number };
  /**
   * The pod's fsGroup, with an image to apply it in: a claim's volume gets it as its group,
   * group-writable with the setgid bit, as the kubelet applies fsGroup to a volume (a new Docker
   * volume is root's and 0755: a non-root pod could not write its backups there).
   */
  fsGroup?: { gid: number; image: string };
}

/**
 * The `docker run` arguments that mount `p.mounts` from `p.volumes` (and, for a StatefulSet, a
 * named volume per claim template and pod, created here with the run's label, kept across the
 * pod's restarts). Throws naming the volume when its kind or a subPath on it is not supported, or
 * a referenced ConfigMap/Secret is not rendered.
 */
export async function volumeArgs(ctx: VolumeContext, p: PodVolumes): Promise<string[]> {
  const { podName, volumes, mounts, claimTemplates = [], adaptFile = (_f: string, text: string) => text, owner } = p;
  const args: string[] = [];
  for (const m of mounts) {
    const claim = claimTemplates.find((c) => c.metadata.name === m.name);
    const v = volumes.find((x) => x.name === m.name);
    if (m.subPath && !(v?.configMap || v?.secret))
      throw new Error(`${podName}: subPath on volume ${m.name} is not supported`);
    if (claim || v?.persistentVolumeClaim) {
      const name = claimVolumeName(
        ctx.runId,
        claim ? `${claim.metadata.name}-${podName}` : v!.persistentVolumeClaim!.claimName,
      );
      await docker("volume", "create", "--label", `aps-rehearsal.run=${ctx.runId}`, name);
      if (p.fsGroup)
        await docker(
          ...["run", "--rm", "--user", "0:0", "--volume", `${name}:/v`, "--entrypoint", "sh", p.fsGroup.image],
          ...["-c", `chgrp ${p.fsGroup.gid} /v && chmod g+rwxs /v`],
        );
      args.push("--volume", `${name}:${m.mountPath}${m.readOnly ? ":ro" : ""}`);
    } else if (v?.emptyDir) {
      const size = v.emptyDir.sizeLimit ? `,size=${quantityBytes(v.emptyDir.sizeLimit)}` : "";
      const own = owner ? `,uid=${owner.uid},gid=${owner.gid}` : "";
      args.push("--tmpfs", `${m.mountPath}:rw,exec,mode=1777${own}${size}`);
    } else if (v?.configMap || v?.secret) {
      const kind = v.configMap ? "ConfigMap" : "Secret";
      const ref = v.configMap ? v.configMap.name : v.secret!.secretName;
      const obj = ctx.objects.find((o) => o.kind === kind && o.metadata.name === ref);
      if (!obj && !(v.configMap ?? v.secret)!.optional) throw new Error(`${podName}: ${kind} ${ref} is not rendered`);
      const dir = join(ctx.workDir, podName, v.name);
      writeFiles(dir, obj ? dataOf(obj) : {}, (v.configMap ?? v.secret)!.items, adaptFile);
      const src = m.subPath ? join(dir, m.subPath) : dir;
      args.push("--volume", `${src}:${m.mountPath}:ro`);
    } else throw new Error(`${podName}: volume ${m.name} is of a kind the rehearsal does not run`);
  }
  return args;
}
