import { outboxRowsPending, unsettledConsumers } from "../faults/support.js";
import type { System } from "./system.js";
import { waitStrictly } from "./wait.js";

/**
 * "Nothing more can happen": the wait a test makes before it asserts that some effect did NOT
 * happen (no duplicate notification, no Sagacity for a rejected case) — docs/design/tests.md#the-settled-bus. A short
 * sleep proves nothing there: on JetStream a redelivery comes after a NAK backoff (1 s doubling)
 * or after `ack_wait`, so a duplicate produced by a redelivery lands after any sleep shorter than
 * that, and the test passes on wrong code.
 *
 * Where the system's events are:
 * - `jetstream`: its PostgreSQL (every schema's `outbox`) and its JetStream stream;
 * - `metrics`: the all-in-one's `/metrics` (`aps_outbox_backlog`, `aps_consumer_pending` of the
 *   in-process bus), for the in-process modes and the all-in-one in a container.
 */
export type SettleTarget =
  { kind: "jetstream"; databaseUrl: string; natsUrl: string; stream: string } | { kind: "metrics"; metricsUrl: string };

/** Where `sys`'s events are: JetStream when it runs on NATS (its `env`), else the all-in-one's `/metrics`. */
export function settleTargetOf(sys: System): SettleTarget {
  const env = sys.env;
  if (env?.NATS_URL) {
    if (!env.DATABASE_URL) throw new Error(`mode ${sys.mode}: NATS_URL without DATABASE_URL, cannot read the outboxes`);
    return {
      kind: "jetstream",
      databaseUrl: env.DATABASE_URL,
      natsUrl: env.NATS_URL,
      stream: env.NATS_STREAM ?? "APS",
    };
  }
  return { kind: "metrics", metricsUrl: `${sys.baseUrl.replace(/\/v1$/, "")}/metrics` };
}

/**
 * What is still in flight at `target`, one line each (empty = settled): outboxes with unpublished
 * rows, then consumers with events not yet delivered or not yet acknowledged (JetStream:
 * `num_pending`/`num_ack_pending` of every durable of the stream; in-process: deliveries queued,
 * being handled or waiting for a retry). Throws when the target reports no consumer at all (a
 * `/metrics` without the bus's gauges could never show a delivery in flight).
 */
export async function unsettled(target: SettleTarget): Promise<string[]> {
  if (target.kind === "jetstream") {
    const outboxes = Object.entries(await outboxRowsPending(target.databaseUrl))
      .filter(([, n]) => n > 0)
      .map(([schema, n]) => `outbox ${schema}: ${n}`);
    return [...outboxes, ...(await unsettledConsumers(target.natsUrl, target.stream))];
  }
  const text = await (await fetch(target.metricsUrl)).text();
  const samples = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}\\{[a-z]+="([^"]*)"\\} (\\d+(?:\\.\\d+)?)$`, "gm"))].map(
      (m) => [m[1]!, Number(m[2])] as const,
    );
  const consumers = samples("aps_consumer_pending");
  if (consumers.length === 0) throw new Error(`${target.metricsUrl} reports no aps_consumer_pending: cannot settle`);
  return [
    ...samples("aps_outbox_backlog")
      .filter(([, n]) => n > 0)
      .map(([service, n]) => `outbox ${service}: ${n}`),
    ...consumers.filter(([, n]) => n > 0).map(([durable, n]) => `${durable}: ${n} pending`),
  ];
}

/**
 * Waits until `target` (or the target of a System) is settled — no unpublished outbox row, no
 * consumer with an event to deliver or acknowledge — on two readings `stableMs` apart (one
 * reading samples each outbox and consumer at slightly different instants). Resolves the ms it
 * took; throws with what is still in flight after `timeoutMs` (default 60 s, stretched on a loaded
 * machine: longer than a NAK backoff and the tests' `ack_wait` of 2.5 s, far shorter
 * than the 30 s default ack wait), or at once when a reading fails.
 */
export async function waitForSettled(
  target: SettleTarget | System,
  timeoutMs = 60_000,
  stableMs = 200,
): Promise<number> {
  const t = "kind" in target ? target : settleTargetOf(target);
  const t0 = Date.now();
  let clean = 0;
  let last: string[] = [];
  // two clean readings in a row, looked at `stableMs` apart; a reading that fails (the target
  // unreachable, no consumer gauges) fails the wait at once
  await waitStrictly(
    "the system to settle (what is still in flight: last seen)",
    async () => {
      last = await unsettled(t);
      clean = last.length === 0 ? clean + 1 : 0;
      return clean >= 2;
    },
    { timeoutMs, intervalMs: stableMs, show: () => last.join("; ") || "(settled only once)" },
  );
  return Date.now() - t0;
}
