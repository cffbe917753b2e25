// Push, replicas and faults inside `npm run bench:mix` (// docs/design/tests.md#mixed-load-bench): `*` webhooks on local HTTP receivers in a thread of
// the bench process (a share of them slow; docs/design/tests.md#mixed-load-bench), the feed's own lag, idle SSE streams' cost to the gateways, and
// the count of failed requests when a forum replica is SIGKILLed mid-step against the requests in
// flight at that moment. The pure arithmetic is exported apart and checked by
// test/bench/mix-push.test.ts; the receivers and SQL are exercised by the bench itself.
import { Worker } from "node:worker_threads";
import { percentile } from "./stats.mjs";

/**
 * How many of `n` webhooks are slow at `fraction` (5 %): rounded up, so that any
 * fraction > 0 gives at least one slow endpoint among a few (10 × 5 % → 1; 50 × 5 % → 3), and
 * never more than `n`.
 * @param {number} n
 * @param {number} fraction in [0, 1]
 */
export function slowCount(n, fraction) {
  if (n <= 0 || fraction <= 0) return 0;
  return Math.min(n, Math.ceil(n * fraction - 1e-9));
}

/**
 * Events of the feed a receiver never got: `expected` keys (`eventId type`, the pair the feed keeps
 * unique) minus the keys it received (duplicates — retries, redeliveries — count once).
 * @param {Iterable<string>} expected
 * @param {Set<string>} received
 * @returns {number}
 */
export function missedCount(expected, received) {
  let n = 0;
  for (const k of expected) if (!received.has(k)) n++;
  return n;
}

/**
 * Nearest-rank p50/p95/p99 and max of `ms` (any order; sorted in place), null ones when empty.
 * @param {number[]} ms
 * @returns {{ n: number, p50: number | null, p95: number | null, p99: number | null, max: number | null }}
 */
export function lagSummary(ms) {
  ms.sort((a, b) => a - b);
  const p = (q) => (ms.length ? percentile(ms, q) : null);
  return { n: ms.length, p50: p(0.5), p95: p(0.95), p99: p(0.99), max: ms.length ? ms[ms.length - 1] : null };
}

/**
 * Spread of request counts over the replicas of one service: min / max (1 = even; the issue's
 * "±25 % of each other" is min/max ≥ 0.75), null with fewer than two counts or a zero max.
 * @param {(number | null)[]} counts
 */
export function shareRatio(counts) {
  const c = counts.filter((x) => typeof x === "number");
  if (c.length < 2) return null;
  const max = Math.max(...c);
  return max > 0 ? Math.min(...c) / max : null;
}

/**
 * The verdict on a killed replica ("costs no failed request beyond its in-flight ones"):
 * reads, votes and keyed writes are retried on UNAVAILABLE (docs/design/services.md#retries-declared-in-the-proto, docs/design/edge.md#idempotency-key, docs/design/votes-and-heat.md#idempotent-castvote) and must not fail; an
 * unkeyed write in flight at the kill may have been applied, so it is never retried and may fail.
 * The bench's client cannot see which forum a gateway picked, so every unkeyed write in flight at
 * the kill counts as possibly on the victim (an upper bound: round_robin sent about half of them to
 * the other forum).
 * @param {{ failedReads: number, failedWritesInFlight: number, failedWritesAfter: number, inFlightWrites: number }} k
 *   failedReads: reads through the forum that failed during the step (any time); failedWritesInFlight: unkeyed writes
 *   sent before the kill and answered after it that failed; failedWritesAfter: unkeyed writes sent
 *   after the kill that failed, or sent and failed before it; inFlightWrites: unkeyed writes in
 *   flight at the kill
 * @returns {{ held: boolean, beyond: number }} beyond = failures past the allowance
 */
export function killVerdict(k) {
  const beyond = k.failedReads + k.failedWritesAfter + Math.max(0, k.failedWritesInFlight - k.inFlightWrites);
  return { held: beyond === 0, beyond };
}

/**
 * The lags of the events that occurred in [fromMs, toMs) (epoch ms): `lags[i]` where
 * `occurred[i]` is in the window.
 * @param {{ lags: number[], occurred: number[] }} r
 * @param {number} fromMs
 * @param {number} toMs
 * @returns {number[]}
 */
export function lagsBetween(r, fromMs, toMs) {
  return r.lags.filter((_, i) => r.occurred[i] >= fromMs && r.occurred[i] < toMs);
}

/**
 * Cores used over a wall interval: CPU ms / wall ms.
 * @param {number} cpuMs
 * @param {number} wallMs
 */
export function coresOf(cpuMs, wallMs) {
  return wallMs > 0 ? cpuMs / wallMs : 0;
}

/**
 * Starts `n` HTTP receivers on 127.0.0.1 (one server each, free ports) in a worker thread of their
 * own (receivers-worker.mjs, docs/design/tests.md#mixed-load-bench: the bench client's busy event loop must not delay the
 * answers), the first `slow` of them answering 204 after `slowMs` (a slow endpoint
 * answers just inside the 10 s attempt timeout), the others at once. Each delivery is parsed
 * (`eventId`, `type`, `timestamp` of the body webhookBody writes,
 * services/notifications/src/store/feed.ts) and recorded once per `webhook-id`: the key
 * `eventId type`, the event's `timestamp` (when it occurred, epoch ms, in `occurred`) and the lag
 * from it to its arrival (ms, same machine and clock, taken in the receivers' thread, in `lags`,
 * same index). The records reach the returned objects within ~50 ms; `sync()` resolves once every
 * arrival so far is in them.
 * @param {number} n
 * @param {{ slow: number, slowMs: number }} o
 * @returns {Promise<{ receivers: { url: string, slow: boolean, keys: Set<string>, lags: number[], occurred: number[], deliveries: number }[], sync: () => Promise<void>, close: () => Promise<void> }>}
 */
export async function startReceivers(n, o) {
  const worker = new Worker(new URL("./receivers-worker.mjs", import.meta.url), { workerData: { n, ...o } });
  const receivers = Array.from({ length: n }, (_, i) => ({
    url: "",
    slow: i < o.slow,
    keys: new Set(),
    lags: [],
    occurred: [],
    deliveries: 0,
  }));
  const waiting = new Map();
  let nextSync = 0;
  let closed = null;
  const ready = new Promise((resolve, reject) => {
    worker.once("error", reject);
    worker.on("message", (m) => {
      if (m.type === "ready") {
        m.urls.forEach((u, i) => (receivers[i].url = u));
        resolve();
      } else if (m.type === "arrivals") {
        for (const [i, key, lag, occurred] of m.arrivals) {
          const r = receivers[i];
          r.deliveries++;
          if (key === "") continue;
          r.keys.add(key);
          r.lags.push(lag);
          r.occurred.push(occurred);
        }
      } else if (m.type === "synced") {
        waiting.get(m.id)?.();
        waiting.delete(m.id);
      } else if (m.type === "closed") closed?.();
    });
  });
  await ready;
  const sync = () =>
    new Promise((resolve) => {
      const id = nextSync++;
      waiting.set(id, resolve);
      worker.postMessage({ type: "sync", id });
    });
  const close = async () => {
    await new Promise((resolve) => {
      closed = resolve;
      worker.postMessage({ type: "close" });
    });
    await worker.terminate();
  };
  return { receivers, sync, close };
}

/**
 * Registers one `*` webhook per receiver through the gateway (`POST /v1/me/webhooks`), five per
 * agent (the API's cap), agents taken from `agents` in order. Resolves the webhooks' ids with the
 * key that owns each (for the DELETE at the end).
 * @param {string} origin a gateway
 * @param {{ apiKey: string }[]} agents
 * @param {{ url: string }[]} receivers
 */
export async function registerWebhooks(origin, agents, receivers) {
  const out = [];
  for (let i = 0; i < receivers.length; i++) {
    const agent = agents[Math.floor(i / 5)];
    const res = await fetch(`${origin}/v1/me/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${agent.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receivers[i].url, events: ["*"] }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = await res.json().catch(() => ({}));
    if (res.status !== 201)
      throw new Error(`webhook registration: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    out.push({ id: body.id, apiKey: agent.apiKey });
  }
  return out;
}

/** Deletes the webhooks `registerWebhooks` made (best effort: the database is dropped after the run). */
export async function deleteWebhooks(origin, hooks) {
  for (const h of hooks)
    await fetch(`${origin}/v1/me/webhooks/${h.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${h.apiKey}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
}

/** The feed's head (`max(seq)`, 0 when empty) on client `c`. */
export async function feedHead(c) {
  const { rows } = await c.query("SELECT coalesce(max(seq), 0)::bigint AS head FROM notifications.feed_events");
  return Number(rows[0].head);
}

/**
 * Feed rows after `afterSeq`: their keys (`event_id type`) and the feed's own lag per row
 * (recorded_at − occurred_at: from the source event to its public row, ms), at most 200,000 rows.
 * @param {import("pg").Client} c
 * @param {number} afterSeq
 */
export async function feedSince(c, afterSeq) {
  const { rows } = await c.query(
    `SELECT event_id || ' ' || type AS key,
            extract(epoch FROM recorded_at - occurred_at) * 1000 AS lag_ms,
            extract(epoch FROM recorded_at) * 1000 AS recorded_ms
       FROM notifications.feed_events WHERE seq > $1 ORDER BY seq LIMIT 200000`,
    [afterSeq],
  );
  return rows.map((r) => ({ key: r.key, lagMs: Number(r.lag_ms), recordedMs: Number(r.recorded_ms) }));
}

/**
 * Waits (≤ `maxMs`) until every healthy receiver holds every feed row after `afterSeq`; resolves the
 * feed rows then and how long it waited.
 * @param {import("pg").Client} c
 * @param {number} afterSeq
 * @param {{ slow: boolean, keys: Set<string> }[]} receivers
 * @param {number} maxMs
 */
export async function drain(c, afterSeq, receivers, maxMs) {
  const t0 = performance.now();
  for (;;) {
    const feed = await feedSince(c, afterSeq);
    const behind = receivers.filter(
      (r) =>
        !r.slow &&
        missedCount(
          feed.map((f) => f.key),
          r.keys,
        ) > 0,
    ).length;
    if (behind === 0 || performance.now() - t0 >= maxMs) return { feed, waitedMs: performance.now() - t0 };
    await new Promise((r) => setTimeout(r, 1000));
  }
}
