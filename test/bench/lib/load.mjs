// HTTP load with autocannon (docs/performance.md: the same connections and duration for the system and its
// baselines). One function runs one measured load against one origin, after a short warm-up
// run that is not recorded (JIT, connection pools, caches).
import autocannon from "autocannon";

/** Load settings shared by every HTTP measurement of a run. */
export const LOAD = {
  /** Concurrent keep-alive connections (docs/performance.md: 50). */
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  /** Measured seconds per load (BENCH_DURATION, default 10). */
  duration: Number(process.env.BENCH_DURATION ?? 10),
  /** Unrecorded warm-up seconds before each load (BENCH_WARMUP, default 2; 0 = none). */
  warmup: Number(process.env.BENCH_WARMUP ?? 2),
};

/**
 * Summary of one load: successful answers per second, latency percentiles (ms) over every
 * answer, and what went wrong (`non2xx` answers, socket `errors`, `timeouts`).
 * @typedef {{ reqPerSec: number, p50: number, p99: number, ok: number, non2xx: number, errors: number, timeouts: number, seconds: number, bytesPerAnswer: number }} LoadResult
 */

/**
 * Runs autocannon against `origin` for LOAD.duration seconds at LOAD.connections, after a
 * LOAD.warmup-second run with the same request (not recorded).
 * @param {string} origin `http://127.0.0.1:<port>`
 * @param {object} request one autocannon request: `{ method, path, headers, body, setupRequest, onResponse }`
 *   (`setupRequest(req, context)` may change path/body/headers per request).
 * @param {{ duration?: number, warmup?: number }} [opts] overrides of LOAD for this load
 * @returns {Promise<LoadResult>}
 */
export async function load(origin, request, opts = {}) {
  const warmup = opts.warmup ?? LOAD.warmup;
  if (warmup > 0) await run(origin, request, warmup);
  const r = await run(origin, request, opts.duration ?? LOAD.duration);
  const ok = r["2xx"];
  return {
    reqPerSec: round(ok / r.duration, 1),
    p50: round(r.latency.p50, 2),
    p99: round(r.latency.p99, 2),
    ok,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    seconds: round(r.duration, 2),
    bytesPerAnswer: r.requests.total ? Math.round(r.throughput.total / r.requests.total) : 0,
  };
}

/** One autocannon run; rejects on an autocannon error. */
function run(origin, request, duration) {
  return autocannon({ url: origin, connections: LOAD.connections, duration, requests: [request] });
}

/**
 * A request whose path is picked at random from `paths` for every request.
 * @param {string[]} paths
 */
export function randomPathRequest(paths) {
  return {
    method: "GET",
    path: paths[0],
    setupRequest: (req) => {
      req.path = paths[Math.floor(Math.random() * paths.length)];
      return req;
    },
  };
}

/** `x` rounded to `digits` decimals. */
export function round(x, digits = 0) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
