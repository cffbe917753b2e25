// The pure arithmetic of `npm run bench:mix` (docs/design/tests.md#mixed-load-bench): the issue's
// per-agent daily mix, the request rates it gives at a number of daily agents and a peak factor,
// latency summaries, and the "cores per component at the peak" model built from CPU ms per
// request. No I/O here, so test/bench/mix-model.test.ts checks it against hand-worked figures.
import { percentile } from "./stats.mjs";

/**
 * Requests one agent makes per day, by route: 20 list reads, 5 post reads,
 * 2 searches, 3 votes, 1 comment, 0.1 new posts — 31.1 requests per agent per day.
 */
export const DAILY_MIX = Object.freeze({ list: 20, post: 5, search: 2, vote: 3, comment: 1, create: 0.1 });

/** Seconds in a day (the mix is per UTC day). */
export const DAY_S = 86_400;

/**
 * Total requests per agent per day of `mix`.
 * @param {Record<string, number>} [mix]
 */
export function perAgentPerDay(mix = DAILY_MIX) {
  return Object.values(mix).reduce((s, x) => s + x, 0);
}

/**
 * Requests per second at the peak for `dailyAgents` agents: the daily average
 * (agents × requests per agent per day / 86,400 s) times `peakFactor`.
 * 100,000 agents × 31.1 / 86,400 × 5 = 180 requests/s.
 * @param {number} dailyAgents distinct agents active in a day
 * @param {number} peakFactor peak rate / daily average rate (5)
 * @param {Record<string, number>} [mix]
 * @returns {number} requests per second
 */
export function peakRate(dailyAgents, peakFactor, mix = DAILY_MIX) {
  return (dailyAgents * perAgentPerDay(mix) * peakFactor) / DAY_S;
}

/**
 * A route drawn from `mix` in proportion to its share: `u` uniform in [0, 1).
 * @param {number} u
 * @param {Record<string, number>} [mix]
 * @returns {string} a key of `mix`
 */
export function pickRoute(u, mix = DAILY_MIX) {
  const total = perAgentPerDay(mix);
  let acc = 0;
  const keys = Object.keys(mix);
  for (const k of keys) {
    acc += mix[k] / total;
    if (u < acc) return k;
  }
  return keys[keys.length - 1];
}

/**
 * Exponential inter-arrival time (ms) of a Poisson process of `perSecond` arrivals a second, for
 * `u` uniform in [0, 1) (open loop: arrivals never wait for answers).
 * @param {number} perSecond
 * @param {number} u
 */
export function gapMs(perSecond, u) {
  return (-Math.log(1 - u) / perSecond) * 1000;
}

/**
 * Latency summary of one route (ms, nearest-rank percentiles of test/bench/lib/stats.mjs).
 * @param {number[]} latencies answered requests' latencies in ms (any order; sorted in place)
 * @returns {{ n: number, p50: number | undefined, p95: number | undefined, p99: number | undefined }}
 */
export function latencySummary(latencies) {
  latencies.sort((a, b) => a - b);
  return {
    n: latencies.length,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    p99: percentile(latencies, 0.99),
  };
}

/**
 * Whether a step broke the limits: p99 over every request above `p99LimitMs`, or more
 * than `errorLimit` of the requests failed (5xx, 429, timeout, network error).
 * @param {{ p99: number | undefined, requests: number, errors: number }} step
 * @param {number} [p99LimitMs] default 1000
 * @param {number} [errorLimit] fraction, default 0.01
 */
export function stepBroke(step, p99LimitMs = 1000, errorLimit = 0.01) {
  if (step.requests === 0) return true;
  return (step.p99 ?? Infinity) > p99LimitMs || step.errors / step.requests > errorLimit;
}

/**
 * Cores one component needs at `rate` requests/s when it spends `cpuMsPerRequest` CPU ms on each
 * request of the mix, and the replicas that gives when each replica should run at most
 * `targetUtilisation` of a core (headroom for bursts and GC; Node runs JavaScript on one core),
 * never fewer than `minReplicas` (two: one may be lost or rolled).
 * 0.9 ms × 180 req/s = 0.162 cores → 1 replica at 0.6, raised to 2.
 * @param {number} cpuMsPerRequest
 * @param {number} rate requests per second
 * @param {{ targetUtilisation?: number, minReplicas?: number }} [o] defaults 0.6 and 2
 * @returns {{ cores: number, replicas: number }}
 */
export function coresAt(cpuMsPerRequest, rate, o = {}) {
  const target = o.targetUtilisation ?? 0.6;
  const min = o.minReplicas ?? 2;
  const cores = (cpuMsPerRequest * rate) / 1000;
  return { cores, replicas: Math.max(min, Math.ceil(cores / target - 1e-9)) };
}

/**
 * Storage a year from bytes per action: Σ over tables of (rows inserted per request × bytes per
 * row) × requests per day × 365, in bytes. Tables with a retention rule keep at most
 * `retentionDays` days of rows (docs/retention.md), so they count min(365, retention) days.
 * @param {{ table: string, rowsPerRequest: number, bytesPerRow: number, retentionDays?: number }[]} tables
 * @param {number} requestsPerDay
 * @returns {{ table: string, bytes: number }[]} per table, largest first
 */
export function storagePerYear(tables, requestsPerDay) {
  return tables
    .map((t) => ({
      table: t.table,
      bytes: t.rowsPerRequest * t.bytesPerRow * requestsPerDay * Math.min(365, t.retentionDays ?? 365),
    }))
    .sort((a, b) => b.bytes - a.bytes);
}
