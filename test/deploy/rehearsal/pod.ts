import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { docker, waitUntil } from "@aps/testkit";
import type { Manifest } from "../../ops/chart-tools.js";
import { expand, resolveEnv } from "./env.js";
import { adaptImage, type LocalImages } from "./images.js";
import { runProbe, type Probe, type ProbeTarget } from "./probes.js";
import { quantityBytes, volumeArgs, type VolumeContext } from "./volumes.js";

/**
 * One pod as one Docker container on the rehearsal network: the rendered container's command,
 * args, env, volumes, security context and memory limit; network aliases for the Services that
 * select it; stopped the way the kubelet stops a pod (preStop, SIGTERM, the grace period).
 */

/** What a pod needs from the run. */
export interface PodContext extends VolumeContext {
  /** The Docker network, `aps-rehearsal-<run>`. */
  network: string;
  /** The release's namespace (for DNS names and fieldRef). */
  namespace: string;
  images: LocalImages;
  /** Hands out the next free address of the network. */
  nextIP(): string;
  /** The network's gateway address, standing for the node's. */
  hostIP: string;
}

/** A running (or stopped) pod. */
export interface Pod extends ProbeTarget {
  name: string;
  /** `Deployment/aps-gateway`, `StatefulSet/aps-nats`, `Job/aps-forum-migrate`. */
  owner: string;
  labels: Record<string, string>;
  /** The rendered pod spec (template.spec). */
  spec: any;
  /** Its one container (a pod with several is refused). */
  container: any;
  /** The DNS names it answers to on the network. */
  aliases: string[];
  /** Its container's env as resolved at start (secrets included: never printed). */
  env: Record<string, string>;
}

/** The DNS names of `pod`: each selecting Service's name (short to cluster.local) and, with `subdomain`, `<pod>.<subdomain>…`. */
export function podAliases(
  objects: readonly Manifest[],
  namespace: string,
  pod: { name: string; labels: Record<string, string>; subdomain?: string },
): string[] {
  const forms = (n: string) => [n, `${n}.${namespace}`, `${n}.${namespace}.svc`, `${n}.${namespace}.svc.cluster.local`];
  const services = objects.filter(
    (o) =>
      o.kind === "Service" &&
      o.spec?.selector &&
      Object.entries(o.spec.selector as Record<string, string>).every(([k, v]) => pod.labels[k] === v),
  );
  return [
    ...services.flatMap((s) => forms(s.metadata.name)),
    ...(pod.subdomain ? forms(`${pod.name}.${pod.subdomain}`) : []),
  ];
}

const users = new Map<string, { uid: number; gid: number }>();
/**
 * `user` (`uid:gid`, `uid`, or a name the image knows, as `docker run --user` takes it) as numbers;
 * a name is looked up in `image` once (`id`). Without `user`: the image's own user.
 */
async function numericUser(image: string, user: string | undefined): Promise<{ uid: number; gid: number }> {
  const m = user ? /^(\d+)(?::(\d+))?$/.exec(user) : null;
  if (m) return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
  const key = `${image} ${user ?? ""}`;
  if (!users.has(key)) {
    const asUser = user ? ["--user", user] : [];
    const out = await docker("run", "--rm", ...asUser, "--entrypoint", "id", image, "-u");
    const gid = await docker("run", "--rm", ...asUser, "--entrypoint", "id", image, "-g");
    users.set(key, { uid: Number(out), gid: Number(gid) });
  }
  return users.get(key)!;
}

/**
 * Starts pod `name` of `owner` from `template` (a rendered pod template) as a detached container
 * `aps-rehearsal-<run>-<name>` and resolves once Docker runs it (not once it is ready:
 * {@link waitReady}). `restart` is the pod's restartPolicy (Always → Docker `--restart always`).
 * Throws on a pod with several containers or init containers, or what resolveEnv/volumeArgs refuse.
 */
export async function startPod(
  ctx: PodContext,
  opts: { name: string; owner: string; template: any; subdomain?: string; claimTemplates?: any[] },
): Promise<Pod> {
  const spec = opts.template.spec;
  if (spec.containers.length !== 1 || spec.initContainers?.length)
    throw new Error(`${opts.name}: the rehearsal runs pods of one container without init containers`);
  const container = spec.containers[0];
  const labels: Record<string, string> = opts.template.metadata?.labels ?? {};
  const ip = ctx.nextIP();
  const env = resolveEnv(
    container,
    {
      name: opts.name,
      namespace: ctx.namespace,
      uid: randomUUID(),
      labels,
      annotations: opts.template.metadata?.annotations ?? {},
      nodeName: "aps-rehearsal-node",
      serviceAccountName: spec.serviceAccountName ?? "default",
      podIP: ip,
      hostIP: ctx.hostIP,
    },
    ctx.objects,
  );
  const vars = new Map(env);
  const aliases = podAliases(ctx.objects, ctx.namespace, {
    name: opts.name,
    labels,
    ...(opts.subdomain ? { subdomain: opts.subdomain } : {}),
  });
  const adapter = adaptImage(container.image, ctx.images);
  const sc = { ...spec.securityContext, ...container.securityContext };
  const containerName = `aps-rehearsal-${ctx.runId}-${opts.name}`;
  const args = ["run", "--detach", "--name", containerName, "--hostname", opts.name.slice(0, 63)];
  args.push(
    "--network",
    ctx.network,
    "--ip",
    ip,
    "--label",
    `aps-rehearsal.run=${ctx.runId}`,
    "--label",
    `aps-rehearsal.owner=${opts.owner}`,
  );
  for (const a of aliases) args.push("--network-alias", a);
  if ((spec.restartPolicy ?? "Always") === "Always") args.push("--restart", "always");
  const user =
    adapter.user ?? (sc.runAsUser !== undefined ? `${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}` : undefined);
  const ids = await numericUser(adapter.image, user);
  if (user) args.push("--user", user);
  // the kubelet adds the pod's fsGroup to the container's groups (its volumes are that group's)
  if (spec.securityContext?.fsGroup !== undefined) args.push("--group-add", String(spec.securityContext.fsGroup));
  if (adapter.stopSignal) args.push("--stop-signal", adapter.stopSignal);
  if (sc.readOnlyRootFilesystem) args.push("--read-only");
  for (const cap of sc.capabilities?.drop ?? []) args.push("--cap-drop", cap);
  for (const cap of sc.capabilities?.add ?? []) args.push("--cap-add", cap);
  if (sc.allowPrivilegeEscalation === false) args.push("--security-opt", "no-new-privileges");
  const memory = container.resources?.limits?.memory;
  if (memory) args.push("--memory", String(quantityBytes(memory)));
  args.push(
    ...(await volumeArgs(ctx, {
      podName: opts.name,
      volumes: spec.volumes ?? [],
      mounts: container.volumeMounts ?? [],
      claimTemplates: opts.claimTemplates ?? [],
      ...(adapter.adaptFile ? { adaptFile: adapter.adaptFile } : {}),
      owner: { uid: ids.uid, gid: spec.securityContext?.fsGroup ?? ids.gid },
      ...(spec.securityContext?.fsGroup !== undefined
        ? { fsGroup: { gid: spec.securityContext.fsGroup, image: adapter.image } }
        : {}),
    })),
  );
  for (const m of adapter.mounts ?? []) args.push("--volume", m);
  // the env through a file (one line each; a value with a line break on the command line): no
  // secret in a process list or an error message
  const envFile = join(ctx.workDir, `${opts.name}.env`);
  writeFileSync(
    envFile,
    env
      .filter(([, v]) => !v.includes("\n"))
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
    { mode: 0o600 },
  );
  args.push("--env-file", envFile);
  for (const [k, v] of env) if (v.includes("\n")) args.push("--env", `${k}=${v}`);
  // command replaces the image's entrypoint, args its CMD (both $(VAR)-expanded), as in Kubernetes
  const command: string[] | undefined = container.command?.map((c: string) => expand(c, vars));
  const cargs: string[] = (container.args ?? []).map((c: string) => expand(c, vars));
  if (command) args.push("--entrypoint", command[0]!, adapter.image, ...command.slice(1), ...cargs);
  else if (adapter.entrypoint) args.push("--entrypoint", adapter.entrypoint, adapter.image, ...cargs);
  else args.push(adapter.image, ...cargs);
  await docker(...args);
  return {
    name: opts.name,
    owner: opts.owner,
    labels,
    spec,
    container,
    aliases,
    env: Object.fromEntries(env),
    ip,
    containerName,
    ports: container.ports ?? [],
  };
}

/**
 * Resolves once `pod` passed its startupProbe (when it has one), then its readinessProbe (when it
 * has none: once it runs), looking every periodSeconds of the probe (at most every second);
 * rejects past `timeoutMs` (stretched by TEST_TIME_SCALE) with the container's state and the last
 * lines of its log.
 */
export async function waitReady(pod: Pod, timeoutMs: number): Promise<void> {
  for (const probe of [pod.container.startupProbe, pod.container.readinessProbe] as Array<Probe | undefined>) {
    if (!probe) continue;
    try {
      const what = `pod ${pod.name} to pass its ${probe === pod.container.startupProbe ? "startup" : "readiness"} probe`;
      const outcome = await waitUntil(
        what,
        async () => {
          if (await runProbe(probe, pod)) return "ready";
          // a crash loop fails the wait at once, with the log that says why
          const restarts = Number(await docker("inspect", "-f", "{{.RestartCount}}", pod.containerName));
          return restarts >= 3 ? "crash loop" : undefined;
        },
        { timeoutMs, intervalMs: Math.min(1000, (probe.periodSeconds ?? 10) * 1000) },
      );
      if (outcome !== "ready") throw new Error(`${what}: ${outcome}`);
    } catch (err) {
      const state = await docker(
        "inspect",
        "-f",
        "{{.State.Status}} exit={{.State.ExitCode}} restarts={{.RestartCount}}",
        pod.containerName,
      );
      throw new Error(`${(err as Error).message} (${state}); its log:\n${await podLog(pod)}`, { cause: err });
    }
  }
}

/** The last `lines` lines of the pod's container log (stdout and stderr). */
export async function podLog(pod: Pod, lines = 40): Promise<string> {
  return new Promise((resolve) =>
    execFile("docker", ["logs", "--tail", String(lines), pod.containerName], { maxBuffer: 16 << 20 }, (_e, out, err) =>
      resolve(`${out}${err}`.trim()),
    ),
  );
}

/** How a pod stopped: its preStop's time and outcome, the whole stop's time (ms) and the exit code. */
export interface PodStop {
  /** When SIGTERM was sent (ms since the epoch). */
  sigtermAt: number;
  preStopMs: number;
  preStopOk: boolean;
  totalMs: number;
  exitCode: number;
}

function httpPreStop(h: { path?: string; port: number | string }, pod: Pod, timeoutMs: number): Promise<boolean> {
  const port = typeof h.port === "number" ? h.port : pod.ports.find((p) => p.name === h.port)?.containerPort;
  return new Promise((resolve) => {
    const req = request({ host: pod.ip, port, path: h.path ?? "/", agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on("error", () => resolve(false));
    req.end();
  });
}

/**
 * Stops `pod` as the kubelet does: runs its preStop hook (exec in the container, or httpGet),
 * bounded by terminationGracePeriodSeconds (default 30); then SIGTERM with what is left of the
 * grace period (at least 2 s, as the kubelet gives) before SIGKILL (`docker stop -t`). The
 * container stays (stopped) for its log until the run's teardown.
 */
export async function stopPod(pod: Pod): Promise<PodStop> {
  const graceMs = (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
  const t0 = Date.now();
  const hook = pod.container.lifecycle?.preStop;
  let preStopOk = true;
  if (hook?.exec) {
    preStopOk = await new Promise((resolve) =>
      execFile("docker", ["exec", pod.containerName, ...hook.exec.command], { timeout: graceMs }, (err) =>
        resolve(!err),
      ),
    );
  } else if (hook?.httpGet) preStopOk = await httpPreStop(hook.httpGet, pod, graceMs);
  const preStopMs = Date.now() - t0;
  const left = Math.max(2, Math.ceil((graceMs - preStopMs) / 1000));
  const sigtermAt = Date.now();
  await docker("stop", "-t", String(left), pod.containerName);
  const exitCode = Number(await docker("inspect", "-f", "{{.State.ExitCode}}", pod.containerName));
  return { sigtermAt, preStopMs, preStopOk, totalMs: Date.now() - t0, exitCode };
}
