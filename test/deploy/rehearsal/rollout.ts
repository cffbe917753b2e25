import { waitUntil } from "@aps/testkit";
import type { Manifest } from "../../ops/chart-tools.js";
import type { Endpoints } from "./balancer.js";
import { addDeploymentPod, type Cluster } from "./cluster.js";
import { stopPod, waitReady, type PodStop } from "./pod.js";

/**
 * A rolling restart of a Deployment as the Deployment controller runs it with the chart's
 * strategy (maxSurge 1, maxUnavailable 0): one pod at a time, a new pod started and ready first,
 * then an old one taken out of its Service's endpoints and stopped the way the kubelet stops it.
 */

/** What one Deployment's roll did: pods replaced, its time (ms) and each old pod's stop. */
export interface RollResult {
  deployment: string;
  replaced: number;
  ms: number;
  stops: Array<{ pod: string } & PodStop>;
}

/**
 * Replaces every pod of Deployment `d` in cluster `c`, one at a time: starts a new pod, waits for
 * its readiness (and, when `endpoints` serve this Deployment, for it to be a ready endpoint),
 * then takes the oldest pod out of `endpoints` (its deletion started) and stops it (preStop,
 * SIGTERM, grace period). Resolves once every old pod stopped; rejects when a new pod is not
 * ready within `timeoutMs` (stretched by TEST_TIME_SCALE) — the old pods then keep serving.
 */
export async function rollDeployment(
  c: Cluster,
  d: Manifest,
  timeoutMs: number,
  endpoints?: Endpoints,
): Promise<RollResult> {
  const key = `Deployment/${d.metadata.name}`;
  const t0 = Date.now();
  const old = [...(c.pods.get(key) ?? [])];
  const stops: RollResult["stops"] = [];
  const mark = (what: string) => c.timeline.push({ at: Date.now(), what });
  for (const gone of old) {
    const pod = await addDeploymentPod(c, d);
    mark(`${pod.name} started`);
    c.pods.set(key, [...c.pods.get(key)!, pod]);
    await waitReady(pod, timeoutMs);
    mark(`${pod.name} ready`);
    if (endpoints) {
      endpoints.add(pod);
      await waitUntil(`${pod.name} a ready endpoint`, () => endpoints.isReady(pod), { timeoutMs });
    }
    endpoints?.terminate(gone);
    mark(`${gone.name} terminating (preStop)`);
    c.pods.set(
      key,
      c.pods.get(key)!.filter((p) => p !== gone),
    );
    const stop = await stopPod(gone);
    c.timeline.push({ at: stop.sigtermAt, what: `${gone.name} SIGTERM` });
    mark(`${gone.name} stopped (exit ${stop.exitCode})`);
    stops.push({ pod: gone.name, ...stop });
  }
  const r = { deployment: d.metadata.name, replaced: old.length, ms: Date.now() - t0, stops };
  c.log(
    `[rehearsal] rolled ${key}: ${r.replaced} pod(s) in ${(r.ms / 1000).toFixed(1)} s; stops ${stops
      .map((s) => `${s.pod} preStop ${s.preStopMs} ms, exit ${s.exitCode} after ${s.totalMs} ms`)
      .join("; ")}`,
  );
  return r;
}
