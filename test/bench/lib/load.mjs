// HTTP load with autocannon (docs/performance.md: the same connections and duration for the system and its
// baselines). One function runs one measured load against one origin, after a short warm-up
// run that is not recorded (JIT, connection pools, caches).
import autocannon from "autocannon";

/** BENCH_SMALL=1: the small run CI makes so the bench cannot rot (its figures mean nothing). */
export const SMALL = process.env.BENCH_SMALL === "1";

/** Load settings shared by every HTTP measurement of a run. */
export const LOAD = {
  /** Concurrent keep-alive connections (docs/performance.md: 50; small run 10). */
  connections: Number(process.env.BENCH_CONNECTIONS ?? (SMALL ? 10 : 50)),
  /** Measured seconds per load (BENCH_DURATION, default 10; small run 2). */
  duration: Number(process.env.BENCH_DURATION ?? (SMALL ? 2 : 10)),
  /** Unrecorded warm-up seconds before each load (BENCH_WARMUP, default 2; small run 1; 0 = none). */
  warmup: Number(process.env.BENCH_WARMUP ?? (SMALL ? 1 : 2)),
};

/**
 * Summary of one load: successful answers per second, latency percentiles (ms) over every
 * answer, and what went wrong (`non2xx` answers, socket `errors`, `timeouts`). With a `verify`
 * option, `checked` 2xx answers of the measured run had their body checked and `wrong` of them
 * failed the check (both 0 without one).
 * @typedef {{ reqPerSec: number, p50: number, p99: number, ok: number, non2xx: number, errors: number, timeouts: number, seconds: number, bytesPerAnswer: number, checked: number, wrong: number }} LoadResult
 */

/**
 * Runs autocannon against `origin` for LOAD.duration seconds at LOAD.connections, after a
 * LOAD.warmup-second run with the same request (not recorded).
 * @param {string} origin `http://127.0.0.1:<port>`
 * @param {object} request one autocannon request: `{ method, path, headers, body, setupRequest, onResponse }`
 *   (`setupRequest(req, context)` may change path/body/headers per request).
 * @param {{ duration?: number, warmup?: number, rate?: number, verify?: (body: string, path: string) => boolean }} [opts]
 *   overrides of LOAD for this load; `rate`: requests per second of all connections together
 *   (autocannon's `overallRate`; absent: as fast as answers come); `verify` checks the body of every 2xx answer of the measured
 *   run against the path it was sent to (a figure for wrong content is no figure)
 * @returns {Promise<LoadResult>}
 */
export async function load(origin, request, opts = {}) {
  const warmup = opts.warmup ?? LOAD.warmup;
  if (warmup > 0) await run(origin, request, warmup, opts.rate);
  const counts = { checked: 0, wrong: 0 };
  const measured = opts.verify ? verifying(request, opts.verify, counts) : request;
  const r = await run(origin, measured, opts.duration ?? LOAD.duration, opts.rate);
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
    ...counts,
  };
}

/**
 * `request` with every 2xx answer's body passed to `verify(body, path)`; counts into `counts`.
 * The path is the one `setupRequest` chose for that request (one request in flight per connection).
 */
function verifying(request, verify, counts) {
  return {
    ...request,
    setupRequest(req, context) {
      const out = request.setupRequest ? request.setupRequest(req, context) : req;
      context.verifyPath = out?.path ?? request.path;
      return out;
    },
    onResponse(status, body, context, headers) {
      request.onResponse?.(status, body, context, headers);
      if (status < 200 || status >= 300) return;
      counts.checked++;
      let good;
      try {
        good = verify(String(body), context.verifyPath) === true;
      } catch {
        good = false; // unparsable: wrong content
      }
      if (!good) counts.wrong++;
    },
  };
}

/** One autocannon run, at `rate` requests/s overall when given; rejects on an autocannon error. */
function run(origin, request, duration, rate) {
  return autocannon({
    url: origin,
    connections: LOAD.connections,
    duration,
    requests: [request],
    ...(rate ? { overallRate: rate } : {}),
  });
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
