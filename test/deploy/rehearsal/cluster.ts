import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docker, scaled } from "@aps/testkit";
import type { Manifest } from "../../ops/chart-tools.js";
import type { LocalImages } from "./images.js";
import { podLog, startPod, waitReady, type Pod, type PodContext } from "./pod.js";

/**
 * The rehearsal's "cluster": one private Docker network `aps-rehearsal-<run>`, the rendered
 * workloads started in dependency order (StatefulSets, the dependency Deployments, the migration
 * hook Jobs to completion, the app Deployments), and a teardown that removes every container,
 * volume and the network this run created (found by the label `aps-rehearsal.run=<run>`).
 */

/** A running rehearsal. */
export interface Cluster {
  ctx: PodContext;
  /** The current pods of each workload, by `Kind/name`. */
  pods: Map<string, Pod[]>;
  /** Containers started so far (pods and Job attempts). */
  started: number;
  /** The log line sink (the test's console). */
  log: (line: string) => void;
  /** What happened when (ms since the epoch): pods started, ready, out of endpoints, SIGTERM, stopped. */
  timeline: Array<{ at: number; what: string }>;
}

const suffix = () => randomBytes(4).toString("hex").slice(0, 5);

/** IPv4 `a.b.c.d` + n. */
function addIPv4(ip: string, n: number): string {
  const v = ip.split(".").reduce((a, x) => a * 256 + Number(x), 0) + n;
  return [24, 16, 8, 0].map((s) => Math.floor(v / 2 ** s) % 256).join(".");
}

/**
 * Creates the run's network (Docker picks a free IPv4 subnet) and work folder. Resolves with an
 * empty cluster; rejects when Docker cannot create the network.
 */
export async function createCluster(
  objects: readonly Manifest[],
  images: LocalImages,
  log: (l: string) => void,
): Promise<Cluster> {
  const runId = suffix();
  const network = `aps-rehearsal-${runId}`;
  // Docker picks a free subnet; the network is made again with it given, the only kind on which
  // `docker run --ip` may choose each pod's address (known before start: status.podIP)
  await docker("network", "create", "--label", `aps-rehearsal.run=${runId}`, network);
  const ipam = "{{(index .IPAM.Config 0).Subnet}} {{(index .IPAM.Config 0).Gateway}}";
  const [subnet, gateway] = (await docker("network", "inspect", "-f", ipam, network)).split(" ");
  await docker("network", "rm", network);
  await docker(
    "network",
    "create",
    "--label",
    `aps-rehearsal.run=${runId}`,
    "--subnet",
    subnet!,
    "--gateway",
    gateway!,
    network,
  );
  const base = subnet!.split("/")[0]!;
  let next = 10;
  const workDir = mkdtempSync(join(tmpdir(), `aps-rehearsal-${runId}-`));
  chmodSync(workDir, 0o755);
  const ctx: PodContext = {
    runId,
    network,
    namespace: "aps",
    images,
    objects,
    workDir,
    hostIP: gateway!,
    nextIP: () => addIPv4(base, next++),
  };
  log(`[rehearsal] run ${runId}: network ${network} (${subnet}), files in ${workDir}`);
  return { ctx, pods: new Map(), started: 0, log, timeline: [] };
}

/** Replicas of a Deployment: spec.replicas, else its HorizontalPodAutoscaler's minReplicas, else 1. */
export function replicasOf(objects: readonly Manifest[], d: Manifest): number {
  if (d.spec.replicas !== undefined) return d.spec.replicas;
  const hpa = objects.find(
    (o) => o.kind === "HorizontalPodAutoscaler" && o.spec?.scaleTargetRef?.name === d.metadata.name,
  );
  return hpa?.spec?.minReplicas ?? 1;
}

/** Starts one more pod of Deployment `d` (`<name>-<5 random>`); resolves with it once Docker runs it. */
export async function addDeploymentPod(c: Cluster, d: Manifest): Promise<Pod> {
  const pod = await startPod(c.ctx, {
    name: `${d.metadata.name}-${suffix()}`,
    owner: `Deployment/${d.metadata.name}`,
    template: d.spec.template,
  });
  c.started++;
  return pod;
}

/**
 * Starts every replica of workload `w` (a Deployment, or a StatefulSet's pods `<name>-<i>` with
 * their claims and `<pod>.<serviceName>` names; all at once, as podManagementPolicy Parallel —
 * which is also the only way a NATS cluster's first servers find each other) and resolves once
 * each is ready; rejects past `timeoutMs` naming the pod, with its log.
 */
export async function startWorkload(c: Cluster, w: Manifest, timeoutMs: number): Promise<Pod[]> {
  const key = `${w.kind}/${w.metadata.name}`;
  const n = w.kind === "StatefulSet" ? (w.spec.replicas ?? 1) : replicasOf(c.ctx.objects, w);
  const pods: Pod[] = [];
  for (let i = 0; i < n; i++) {
    if (w.kind === "StatefulSet") {
      pods.push(
        await startPod(c.ctx, {
          name: `${w.metadata.name}-${i}`,
          owner: key,
          template: w.spec.template,
          subdomain: w.spec.serviceName,
          claimTemplates: w.spec.volumeClaimTemplates ?? [],
        }),
      );
      c.started++;
    } else pods.push(await addDeploymentPod(c, w));
  }
  c.pods.set(key, pods);
  await Promise.all(pods.map((p) => waitReady(p, timeoutMs)));
  c.log(`[rehearsal] ${key}: ${pods.length} pod(s) ready`);
  return pods;
}

/**
 * Runs Job `job` to completion: a pod (restartPolicy Never) per attempt, up to 1 + backoffLimit
 * attempts; resolves with the attempts and the time it took (ms) once one exits 0; rejects with
 * the last attempt's log when every attempt failed or `timeoutMs` passed.
 */
export async function runJob(c: Cluster, job: Manifest, timeoutMs: number): Promise<{ attempts: number; ms: number }> {
  const t0 = Date.now();
  const attempts = 1 + (job.spec.backoffLimit ?? 6);
  let last: Pod | undefined;
  for (let i = 1; i <= attempts; i++) {
    last = await startPod(c.ctx, {
      name: `${job.metadata.name}-${suffix()}`,
      owner: `Job/${job.metadata.name}`,
      template: job.spec.template,
    });
    c.started++;
    const code = await Promise.race([
      docker("wait", last.containerName).then(Number),
      new Promise<number>((_, reject) =>
        setTimeout(
          () => reject(new Error(`Job ${job.metadata.name} ran past ${scaled(timeoutMs)} ms`)),
          scaled(timeoutMs),
        ).unref(),
      ),
    ]);
    if (code === 0) return { attempts: i, ms: Date.now() - t0 };
    c.log(`[rehearsal] Job/${job.metadata.name} attempt ${i} exited ${code}`);
  }
  throw new Error(`Job ${job.metadata.name} failed ${attempts} times; its last log:\n${await podLog(last!)}`);
}

/**
 * Removes everything run `c` created: its containers (running or not), named volumes and network,
 * and its work folder. Never throws (a teardown after a failure must finish); returns what it removed.
 */
export async function teardown(c: Cluster): Promise<{ containers: number; volumes: number }> {
  const label = `label=aps-rehearsal.run=${c.ctx.runId}`;
  const ignore = () => "";
  const ids = (await docker("ps", "-aq", "--filter", label).catch(ignore)).split("\n").filter(Boolean);
  if (ids.length > 0) await docker("rm", "-f", "-v", ...ids).catch(ignore);
  const vols = (await docker("volume", "ls", "-q", "--filter", label).catch(ignore)).split("\n").filter(Boolean);
  if (vols.length > 0) await docker("volume", "rm", "-f", ...vols).catch(ignore);
  await docker("network", "rm", c.ctx.network).catch(ignore);
  rmSync(c.ctx.workDir, { recursive: true, force: true });
  return { containers: ids.length, volumes: vols.length };
}
