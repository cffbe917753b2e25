#!/usr/bin/env node
// `npm run bench:mix` — a mixed-load benchmark of the distributed topology (// method: docs/design/tests.md#mixed-load-bench; the model built from it: docs/capacity.md).
//
// On the real PostgreSQL and NATS (DATABASE_URL, NATS_URL; a fresh database and stream per run,
// dropped after): agents with real API keys and posts are seeded in SQL, then the topology
// (deploy/local/start.mjs) runs with each replica layout of BENCH_MIX_TOPOLOGIES (gateways×forums,
// REPLICAS_GATEWAY / REPLICAS_FORUM, docs/design/operations.md#local-replicas) under an open loop (Poisson arrivals) of requests
// by random agents among the active ones, in the issue's per-agent daily mix (20 list reads, 5 post
// reads, 2 searches, 3 votes, 1 comment, 0.1 posts), stepped up by BENCH_MIX_FACTOR until p99 > 1 s
// or errors > 1 % (or BENCH_MIX_MAX_STEPS). Idle SSE streams stay open beside the load.
// Per step it prints per-route p50/p95/p99, CPU ms per request of every process (/proc/<pid>/stat
// before/after), PostgreSQL backends' and NATS's CPU, commits/rows/WAL per request, requests per
// replica; at the end rows and bytes per request per table and the table "cores per component at
// the peak of 100k daily agents (5× peak factor)".
//
// Sizes (env; BENCH_MIX_FULL=1 = the issue's sizes):
//   BENCH_MIX_AGENTS   agents seeded            20,000   (full 1,000,000)
//   BENCH_MIX_POSTS    posts seeded             20,000   (full 1,000,000)
//   BENCH_MIX_ACTIVE   agents sending requests   5,000   (full 100,000)
//   BENCH_MIX_TOPOLOGIES gateways×forums        1x1,2x2  (full 1x1,2x1,1x2,2x2,4x2)
//   BENCH_MIX_START_RATE requests/s of step 1   20;  BENCH_MIX_FACTOR 1.5;  BENCH_MIX_MAX_STEPS 6 (full 10)
//   BENCH_MIX_STEP_S   seconds per step         15       (full 60)
//   BENCH_MIX_SSE      idle SSE streams         200      (full 2,000), spread over the gateways
//   BENCH_MIX_SSE_IDLE_S seconds of the gateways' idle CPU without, then with, the streams: 10
//   BENCH_MIX_WEBHOOKS `*` webhooks on local receivers 10  (full 50); BENCH_MIX_WEBHOOK_SLOW 0.05 of
//                      them answer after BENCH_MIX_WEBHOOK_SLOW_MS 9,000 ms; BENCH_MIX_DRAIN_S 60 s at
//                      most for the healthy ones to catch up after the load
//   BENCH_MIX_EVENTS_PER_S 10: one more step at the first rate with that many extra comments a
//                      second (one public event each), the delivery lag of its events reported
//                      apart (lag p99 < 5 s at 10 events/s; 0: no events step)
//   BENCH_MIX_KILL     1: in layouts with ≥ 2 forums, one more step at the first rate in which the
//                      last forum replica is SIGKILLed half-way (0: no kill step)
//   BENCH_MIX_WARMUP_S unrecorded load at the first rate before the steps of each topology: 10
//   BENCH_MIX_MIN_STEPS steps run even when an earlier one broke the limits: 1
// Search: BENCH_MIX_SEARCH=memory (default) or postgres (KNOWLEDGE_DATABASE_URL = the bench's database:
// the PostgreSQL engine of docs/design/search-and-translation.md#the-postgresql-engine, which indexes the seeded posts once, at the first start).
// The distributed knowledge service without MEILISEARCH_URL / KNOWLEDGE_DATABASE_URL keeps an
// in-memory index rebuilt from every post at each start, seeded ones included; the bench waits for
// that (the tree's CPU falling below a quarter of a core, at most BENCH_MIX_SETTLE_MAX_S: 300 s,
// full 1800 s) before loading.
// BENCH_MIX_SEED_ONLY=1 seeds, prints the seeding times and stops (e.g. to time the full sizes' seeding).
// BENCH_MIX_PROF_DIR=<folder>: every service process writes a CPU profile of each step there.
// Push and faults (docs/design/tests.md#mixed-load-bench): delivery lag of the healthy receivers
// (arrival − the event's occurred time), events they missed after the drain, the feed's lag
// (recorded − occurred), the gateways' idle CPU with and without the SSE streams, and in the kill
// step the failed requests against the ones in flight at the kill (test/bench/lib/mix-push.mjs).
// Prints progress on stderr and the markdown report on stdout; writes
// test/bench/results/mix-latest.{json,md}. Exits 1 when a topology failed to run.
// Not part of the test suite (minutes of load); test/bench/mix-model.test.ts checks its arithmetic.
import { mkdirSync, writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { cleanupAll, cleanupOnSignalsAndCrashes, onCleanup } from "./lib/cleanup.mjs";
import { createDistributedInfra } from "./lib/infra.mjs";
import { cpuDelta, cpuSample, dbSample, requestsServed, serviceProcesses } from "./lib/mix-probes.mjs";
import {
  coresOf,
  deleteWebhooks,
  drain,
  feedHead,
  killVerdict,
  lagsBetween,
  lagSummary,
  missedCount,
  registerWebhooks,
  shareRatio,
  slowCount,
  startReceivers,
} from "./lib/mix-push.mjs";
import { seedAgents, seedPosts } from "./lib/mix-seed.mjs";
import {
  coresAt,
  DAILY_MIX,
  gapMs,
  latencySummary,
  peakRate,
  perAgentPerDay,
  pickRoute,
  stepBroke,
} from "./lib/mix-model.mjs";
import { waitQuiet } from "./lib/proctree.mjs";
import { gatewayHotCursors, randomHotCursors } from "./lib/scale.mjs";
import { cpuProfileEnv, freePort, startSystem } from "./lib/system.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = process.env;
const FULL = env.BENCH_MIX_FULL === "1";
const num = (name, small, full) => Number(env[name] ?? (FULL ? full : small));
const CFG = {
  agents: num("BENCH_MIX_AGENTS", 20_000, 1_000_000),
  posts: num("BENCH_MIX_POSTS", 20_000, 1_000_000),
  active: num("BENCH_MIX_ACTIVE", 5_000, 100_000),
  topologies: (env.BENCH_MIX_TOPOLOGIES ?? (FULL ? "1x1,2x1,1x2,2x2,4x2" : "1x1,2x2")).split(",").map((t) => {
    const [g, f] = t.split("x").map(Number);
    return { gateways: g, forums: f };
  }),
  startRate: num("BENCH_MIX_START_RATE", 20, 20),
  factor: num("BENCH_MIX_FACTOR", 1.5, 1.5),
  maxSteps: num("BENCH_MIX_MAX_STEPS", 6, 10),
  stepS: num("BENCH_MIX_STEP_S", 15, 60),
  sse: num("BENCH_MIX_SSE", 200, 2000),
  sseIdleS: num("BENCH_MIX_SSE_IDLE_S", 10, 10),
  webhooks: num("BENCH_MIX_WEBHOOKS", 10, 50),
  webhookSlow: num("BENCH_MIX_WEBHOOK_SLOW", 0.05, 0.05),
  webhookSlowMs: num("BENCH_MIX_WEBHOOK_SLOW_MS", 9000, 9000),
  drainS: num("BENCH_MIX_DRAIN_S", 60, 120),
  kill: num("BENCH_MIX_KILL", 1, 1),
  seedOnly: env.BENCH_MIX_SEED_ONLY === "1",
  eventsPerS: num("BENCH_MIX_EVENTS_PER_S", 10, 10),
  settleMaxS: num("BENCH_MIX_SETTLE_MAX_S", 300, 1800),
  warmupS: num("BENCH_MIX_WARMUP_S", 10, 10),
  minSteps: num("BENCH_MIX_MIN_STEPS", 1, 1),
  /** The knowledge service's search engine: `memory` (in-memory index) or `postgres` (docs/design/search-and-translation.md#the-postgresql-engine). */
  search: env.BENCH_MIX_SEARCH === "postgres" ? "postgres" : "memory",
};
/** The model's target: 100k daily agents, 5× peak factor. */
const MODEL = { dailyAgents: 100_000, peakFactor: 5 };
const REQUEST_TIMEOUT_MS = 10_000;
const t0 = performance.now();
const log = (m) =>
  process.stderr.write(`[bench:mix ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${m}\n`);
const WORDS = [
  "gateway",
  "forum",
  "index",
  "proposal",
  "cache",
  "replica",
  "seeded",
  "read model",
  "hot list",
  "keeps",
];

/**
 * With BENCH_MIX_PROF_DIR, starts or stops (SIGUSR2, lib/cpu-profile-hook.cjs) a CPU profile in
 * every service process: one profile per process and step, `<service>-main_js-<pid>-<step − 1>.cpuprofile`.
 */
function profile(procs) {
  if (env.BENCH_MIX_PROF_DIR) for (const p of procs) process.kill(p.pid, "SIGUSR2");
}

/** A fetch with a timeout; resolves `{ status, ms }` (status 0 = network error or timeout). */
async function timed(url, init) {
  const t = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - t };
  } catch {
    return { status: 0, ms: performance.now() - t };
  }
}

/** One request of `route` by `agent` through `origin`; resolves `{ status, ms }`. */
function fire(route, origin, agent, data) {
  const auth = { authorization: `Bearer ${agent.apiKey}` };
  const json = { ...auth, "content-type": "application/json" };
  const rnd = (a) => a[Math.floor(Math.random() * a.length)];
  // Post reads, votes and comments lean to hot posts (ids ordered by heat; u² skews to the front).
  const post = () => data.postIds[Math.floor(data.postIds.length * Math.random() ** 2)];
  const v1 = `${origin}/v1`;
  switch (route) {
    case "list": {
      const u = Math.random();
      const path =
        u < 0.7
          ? "/posts?sort=hot&limit=25"
          : u < 0.9
            ? "/posts?sort=new&limit=25"
            : `/posts?sort=hot&limit=25&cursor=${rnd(data.cursors)}`;
      return timed(v1 + path, { headers: auth });
    }
    case "post":
      return timed(`${v1}/posts/${post()}`, { headers: auth });
    case "search":
      return timed(`${v1}/knowledge/search?q=${encodeURIComponent(rnd(WORDS))}`, { headers: auth });
    case "vote":
      return timed(`${v1}/posts/${post()}/vote`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ vote: Math.random() < 0.7 ? 1 : -1 }),
      });
    case "comment":
      return timed(`${v1}/posts/${post()}/comments`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ body: `A comment from ${agent.name}: the read model keeps the hot list on an index.` }),
      });
    default:
      return timed(`${v1}/posts`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({
          title: `Mix proposal by ${agent.name} ${Math.random().toString(36).slice(2, 8)}`,
          body: `A proposal made under the mixed load. ${"The gateway answers from the forum read model. ".repeat(8)}`,
          is_arch_design: Math.random() < 0.6,
        }),
      });
  }
}

/** Routes whose requests reach the forum service (all but search, which the knowledge service answers). */
const THROUGH_FORUM = new Set(["list", "post", "vote", "comment", "create"]);

/**
 * Routes that write without an Idempotency-Key and are never retried once sent (docs/design/services.md#retries-declared-in-the-proto). A
 * vote is retried like a read (CastVote is IDEMPOTENT, docs/design/votes-and-heat.md#idempotent-castvote), so it is not one of them.
 */
const WRITES = new Set(["comment", "create"]);

/**
 * One open-loop step: Poisson arrivals of `rate` requests/s for `seconds` (CFG.stepS), routes drawn
 * from the daily mix, agents at random among the active ones, gateways in turn. Resolves per-route
 * latencies and outcome counts, and each failed request's route, status and send/answer times.
 * `mid` ({ afterS, fn }): `fn` runs once `afterS` seconds into the step; the requests in flight then
 * (per route) and the moment are resolved as `mid` (the kill step, docs/design/tests.md#mixed-load-bench).
 */
async function openLoop(rate, origins, data, seconds = CFG.stepS, mid = null) {
  const start = performance.now();
  const end = start + seconds * 1000;
  const inflight = Object.fromEntries(Object.keys(DAILY_MIX).map((r) => [r, 0]));
  const failures = [];
  let midAt = null;
  let midInflight = null;
  const pending = [];
  const routes = Object.fromEntries(
    Object.keys(DAILY_MIX).map((r) => [r, { ms: [], ok: 0, rejected: 0, errors: 0, statuses: {} }]),
  );
  let g = 0;
  let lateMs = 0;
  for (let next = performance.now(); next < end; next += gapMs(rate, Math.random())) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    else lateMs = Math.max(lateMs, -wait);
    // the kill waits (≤ 2 s) for a moment with requests in flight, so that it can cost some
    const due = start + mid?.afterS * 1000;
    const busy = Object.values(inflight).some((x) => x > 0);
    if (mid && midAt === null && performance.now() >= due && (busy || performance.now() >= due + 2000)) {
      midAt = performance.now();
      midInflight = { ...inflight };
      mid.fn();
    }
    const route = pickRoute(Math.random());
    const agent = data.agents[Math.floor(Math.random() * data.agents.length)];
    const sentAt = performance.now();
    inflight[route]++;
    const p = fire(route, origins[g++ % origins.length], agent, data).then(({ status, ms }) => {
      inflight[route]--;
      const r = routes[route];
      if (status < 200 || status >= 300) r.statuses[status] = (r.statuses[status] ?? 0) + 1;
      if (status < 200 || status >= 500 || status === 429)
        failures.push({ route, status, sentAt, answeredAt: performance.now() });
      if (status >= 200 && status < 300) {
        r.ok++;
        r.ms.push(ms);
      } else if (status >= 400 && status < 500 && status !== 429) {
        r.rejected++;
        r.ms.push(ms);
      } else r.errors++;
    });
    pending.push(p);
  }
  await Promise.all(pending);
  return {
    routes,
    requests: pending.length,
    lateMs,
    failures,
    mid: midAt === null ? null : { at: midAt, inflight: midInflight },
  };
}

/**
 * Opens `n` idle SSE streams spread over the gateways, read in a thread of their own
 * (lib/streams-worker.mjs): `opened()` is how many answered 200 so far, `close()` ends them all.
 */
function openStreams(n, origins, agents) {
  const worker = new Worker(new URL("./lib/streams-worker.mjs", import.meta.url), {
    workerData: { n, origins, keys: agents.map((a) => a.apiKey) },
  });
  let open = 0;
  worker.on("message", (m) => {
    if (m.type === "open") open = m.open;
  });
  worker.on("error", (err) => log(`SSE streams' thread failed: ${err}`));
  return {
    close: () => {
      worker.postMessage("close");
      void worker.terminate();
    },
    opened: () => open,
  };
}

/**
 * The JetStream stream's messages and bytes at the end of the run (every event of the run, the
 * seeding's none: SQL sends no events), for bytes per event in docs/capacity.md; null when unreadable.
 */
async function streamState(infraEnv) {
  const { connect } = await import("nats");
  const nc = await connect({ servers: infraEnv.NATS_URL });
  try {
    const info = await (await nc.jetstreamManager()).streams.info(infraEnv.NATS_STREAM);
    const { messages, bytes } = info.state;
    return { messages, bytes, bytesPerMessage: messages ? Math.round(bytes / messages) : null };
  } catch {
    return null;
  } finally {
    await nc.close();
  }
}

/** Sum of values of `per` (`name#replica` → ms) by service name. */
function byComponent(per) {
  const out = {};
  for (const [k, v] of Object.entries(per)) {
    const name = k.split("#")[0];
    out[name] = (out[name] ?? 0) + v;
  }
  return out;
}

const round = (x, d = 2) =>
  x === undefined || x === null || Number.isNaN(x) ? null : Math.round(x * 10 ** d) / 10 ** d;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sumOf = (o, keys) => keys.reduce((s, k) => s + (o[k] ?? 0), 0);

/**
 * The cores used, over CFG.sseIdleS seconds with no load, by the gateways (summed), PostgreSQL's
 * backends of the database, NATS and the bench client (docs/design/tests.md#mixed-load-bench: SSE streams' idle cost).
 */
async function idleCores(procs, database) {
  const a = cpuSample(procs, database);
  await sleep(CFG.sseIdleS * 1000);
  const b = cpuSample(procs, database);
  const d = cpuDelta(procs, a, b);
  const gw = Object.entries(d.per)
    .filter(([k]) => k.startsWith("gateway#"))
    .reduce((s, [, v]) => s + v, 0);
  const c = (ms) => round(coresOf(ms, d.wallMs), 4);
  return {
    gateways: c(gw),
    postgres: c(d.postgres),
    nats: c(d.nats),
    client: c(d.client),
    seconds: round(d.wallMs / 1000, 1),
  };
}

/**
 * Comments only, Poisson at `rate` a second for `seconds`, beside the mix (the events step: one
 * public `comment.created` each, to feed the webhooks ~`rate` events/s; docs/design/tests.md#mixed-load-bench).
 * Resolves how many were sent, how many were not answered 2xx, and those by status (0 = timeout or network error).
 */
async function commentLoop(rate, origins, data, seconds) {
  const end = performance.now() + seconds * 1000;
  const pending = [];
  let failed = 0;
  const statuses = {};
  let g = 0;
  for (let next = performance.now(); next < end; next += gapMs(rate, Math.random())) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    const agent = data.agents[Math.floor(Math.random() * data.agents.length)];
    pending.push(
      fire("comment", origins[g++ % origins.length], agent, data).then(({ status }) => {
        if (status < 200 || status >= 300) {
          failed++;
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }),
    );
  }
  await Promise.all(pending);
  return { sent: pending.length, failed, statuses };
}

/**
 * The kill step (docs/design/tests.md#mixed-load-bench): `rate` (the last step that held) for CFG.stepS seconds, the
 * last forum replica SIGKILLed half-way; failed requests split into reads, unkeyed writes in flight
 * at the kill and unkeyed writes sent after it, against the requests in flight at the kill.
 */
async function killStep(procs, origins, data, rate) {
  const forums = procs.filter((p) => p.name === "forum");
  const victim = forums[forums.length - 1];
  const before = await Promise.all(forums.map((p) => requestsServed(p.metrics)));
  log(
    `  kill step: ${rate} requests/s for ${CFG.stepS} s, SIGKILL forum#${victim.replica} (pid ${victim.pid}) half-way`,
  );
  const load = await openLoop(rate, origins, data, CFG.stepS, {
    afterS: CFG.stepS / 2,
    fn: () => process.kill(victim.pid, "SIGKILL"),
  });
  if (!load.mid) throw new Error("the kill step ended before its kill");
  const at = load.mid.at;
  const inFlight = (f) => f.sentAt < at && f.answeredAt >= at;
  // search goes gateway → knowledge only: its failures (timeouts of a starved knowledge process)
  // are counted apart, not against the forum's kill
  const elsewhere = load.failures.filter((f) => !THROUGH_FORUM.has(f.route)).length;
  const writes = load.failures.filter((f) => WRITES.has(f.route));
  const k = {
    failedReads: load.failures.length - writes.length - elsewhere,
    failedWritesInFlight: writes.filter(inFlight).length,
    failedWritesAfter: writes.filter((f) => !inFlight(f)).length,
    inFlightWrites: sumOf(load.mid.inflight, [...WRITES]),
  };
  const byRoute = {};
  for (const f of load.failures) {
    const key = `${f.route} ${f.status}${inFlight(f) ? " (in flight)" : ""}`;
    byRoute[key] = (byRoute[key] ?? 0) + 1;
  }
  const all = latencySummary(Object.values(load.routes).flatMap((r) => r.ms));
  const out = {
    rate,
    requests: load.requests,
    victim: `forum#${victim.replica}`,
    forumCallsBefore: Object.fromEntries(forums.map((p, i) => [`forum#${p.replica}`, before[i]])),
    forumShareBefore: round(shareRatio(before), 3),
    inFlightAtKill: sumOf(load.mid.inflight, Object.keys(DAILY_MIX)),
    inFlightWritesAtKill: k.inFlightWrites,
    failed: load.failures.length,
    failedNotThroughForum: elsewhere,
    ...k,
    failures: byRoute,
    p99: round(all.p99, 1),
    ...killVerdict(k),
  };
  log(`    ${JSON.stringify(out)}`);
  return out;
}

/** Runs the steps on one started topology; resolves its steps. */
async function runTopology(topo, infra, data, sql) {
  const port = await freePort();
  log(`topology ${topo.gateways}×${topo.forums}: starting`);
  const sys = await startSystem({
    mode: "distributed",
    root,
    port,
    env: cpuProfileEnv(env.BENCH_MIX_PROF_DIR),
    infraEnv: {
      ...infra.env,
      REPLICAS_GATEWAY: String(topo.gateways),
      REPLICAS_FORUM: String(topo.forums),
      // the webhooks' receivers are http://127.0.0.1:<port> in a thread of this process (tests and local setups only)
      WEBHOOK_ALLOW_PRIVATE: "1",
      ...(CFG.search === "postgres" ? { KNOWLEDGE_DATABASE_URL: infra.env.DATABASE_URL } : {}),
    },
  });
  const out = { ...topo, steps: [] };
  let streams = null;
  let receivers = null;
  let hooks = [];
  const origins = Array.from({ length: topo.gateways }, (_, i) => `http://127.0.0.1:${port + i}`);
  try {
    // The knowledge service re-reads every post into its in-memory index at start. On a loaded
    // machine a busy process gets only a small share of a core, so the tree's CPU says little:
    // wait for the knowledge process itself to idle (< 3 % of a core over 8 s), then the tree.
    const knowledge = serviceProcesses(sys.pid, sys.processes).filter((p) => p.name === "knowledge");
    for (const k of knowledge) await waitQuiet(k.pid, { cores: 0.03, maxMs: CFG.settleMaxS * 1000 });
    const quiet = await waitQuiet(sys.pid, { maxMs: CFG.settleMaxS * 1000 });
    log(`  ${quiet.quiet ? "quiet" : "still busy (gave up)"} after ${(quiet.quietAfterMs / 1000).toFixed(0)} s`);
    out.settle = quiet;
    const procs = serviceProcesses(sys.pid, sys.processes);
    out.processes = procs.map((p) => `${p.name}#${p.replica}`);
    data.cursors = await gatewayHotCursors(origins[0], data.forumCursors);
    // SSE (docs/design/tests.md#mixed-load-bench): the gateways' idle CPU without the streams, then with them.
    out.sse = { without: await idleCores(procs, infra.database) };
    streams = openStreams(CFG.sse, origins, data.agents);
    // up to 60 s: on a loaded machine 2,000 authenticated opens through 4 gateways took longer than 30 s
    for (let i = 0; i < 120 && streams.opened() < CFG.sse; i++) await sleep(500);
    out.sseOpen = streams.opened();
    await sleep(2000);
    out.sse.with = await idleCores(procs, infra.database);
    log(
      `  SSE: ${out.sseOpen} streams; idle cores without ${JSON.stringify(out.sse.without)}, with ${JSON.stringify(out.sse.with)}`,
    );
    // `*` webhooks on local receivers, CFG.webhookSlow of them slow; five per agent, fresh agents per layout.
    const slow = slowCount(CFG.webhooks, CFG.webhookSlow);
    receivers = await startReceivers(CFG.webhooks, { slow, slowMs: CFG.webhookSlowMs });
    const owners = Math.ceil(CFG.webhooks / 5);
    data.hookOwner = (data.hookOwner ?? data.agents.length) - owners;
    hooks = await registerWebhooks(
      origins[0],
      data.agents.slice(data.hookOwner, data.hookOwner + owners),
      receivers.receivers,
    );
    const head = await feedHead(sql);
    const loadStart = Date.now();
    log(`  ${hooks.length} \`*\` webhooks registered (${slow} slow, ${CFG.webhookSlowMs} ms); feed head ${head}`);
    if (CFG.warmupS > 0) {
      log(`  warm-up: ${CFG.startRate} requests/s for ${CFG.warmupS} s (not recorded)`);
      await openLoop(CFG.startRate, origins, data, CFG.warmupS);
    }
    let rate = CFG.startRate;
    for (let step = 1; step <= CFG.maxSteps; step++, rate = Math.round(rate * CFG.factor)) {
      log(`  step ${step}: ${rate} requests/s for ${CFG.stepS} s`);
      const served0 = await Promise.all(procs.map((p) => requestsServed(p.metrics)));
      const db0 = await dbSample(sql, infra.database);
      const cpu0 = cpuSample(procs, infra.database);
      profile(procs);
      const load = await openLoop(rate, origins, data);
      const cpu1 = cpuSample(procs, infra.database);
      profile(procs);
      const db1 = await dbSample(sql, infra.database);
      const served1 = await Promise.all(procs.map((p) => requestsServed(p.metrics)));
      const cpu = cpuDelta(procs, cpu0, cpu1);
      const all = Object.values(load.routes).flatMap((r) => r.ms);
      const total = latencySummary(all);
      const errors = Object.values(load.routes).reduce((s, r) => s + r.errors, 0);
      const rejected = Object.values(load.routes).reduce((s, r) => s + r.rejected, 0);
      const n = load.requests;
      const perReq = (x) => round(x / n, 3);
      const tables = {};
      for (const [name, b] of db1.tables) {
        const a = db0.tables.get(name) ?? { ins: 0, bytes: 0 };
        if (b.ins - a.ins > 0)
          tables[name] = {
            rowsPerRequest: round((b.ins - a.ins) / n, 4),
            bytesPerRow: b.live > 0 ? Math.round(b.bytes / b.live) : null,
          };
      }
      const s = {
        step,
        rate,
        achieved: round(n / (cpu.wallMs / 1000), 1),
        requests: n,
        errors,
        rejected,
        lateMs: round(load.lateMs, 0),
        p50: round(total.p50, 1),
        p95: round(total.p95, 1),
        p99: round(total.p99, 1),
        routes: Object.fromEntries(
          Object.entries(load.routes).map(([k, r]) => {
            const l = latencySummary(r.ms);
            return [
              k,
              {
                n: r.ok + r.rejected + r.errors,
                rejected: r.rejected,
                errors: r.errors,
                statuses: r.statuses,
                p50: round(l.p50, 1),
                p95: round(l.p95, 1),
                p99: round(l.p99, 1),
              },
            ];
          }),
        ),
        cpuMsPerRequest: {
          ...Object.fromEntries(Object.entries(byComponent(cpu.per)).map(([k, v]) => [k, perReq(v)])),
          postgres: perReq(cpu.postgres),
          nats: perReq(cpu.nats),
          client: perReq(cpu.client),
        },
        cpuMsPerRequestPerProcess: Object.fromEntries(Object.entries(cpu.per).map(([k, v]) => [k, perReq(v)])),
        requestsPerReplica: Object.fromEntries(
          procs.map((p, i) => [
            `${p.name}#${p.replica}`,
            served0[i] === null || served1[i] === null ? null : served1[i] - served0[i],
          ]),
        ),
        db: {
          commitsPerRequest: perReq(db1.commits - db0.commits),
          rowsPerRequest: perReq(db1.rows - db0.rows),
          walBytesPerRequest: Math.round((db1.wal - db0.wal) / n),
        },
        tables,
        loadavg: os.loadavg().map((x) => round(x, 2)),
      };
      s.broke = stepBroke({ p99: total.p99, requests: n, errors });
      out.steps.push(s);
      log(
        `    ${s.achieved} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms, errors ${errors}, rejected ${rejected}, CPU ms/req ${JSON.stringify(s.cpuMsPerRequest)}`,
      );
      if (s.broke && step >= CFG.minSteps) break;
    }
    const held = heldStep(out);
    if (held) {
      const share = (name) =>
        shareRatio(
          Object.entries(held.requestsPerReplica)
            .filter(([k]) => k.startsWith(`${name}#`))
            .map(([, v]) => v),
        );
      out.share = { step: held.step, forum: round(share("forum"), 3), gateway: round(share("gateway"), 3) };
    }
    let eventsWindow = null;
    if (CFG.eventsPerS > 0) {
      log(`  events step: ${CFG.startRate} requests/s of the mix + ${CFG.eventsPerS} comments/s for ${CFG.stepS} s`);
      const from = Date.now();
      const cpu0 = cpuSample(procs, infra.database);
      // the bench client's own event loop receives the webhooks and reads the SSE streams: a late
      // loop delays (and dates late) every arrival, so its delay is reported beside the lags
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const [mix, extra] = await Promise.all([
        openLoop(CFG.startRate, origins, data),
        commentLoop(CFG.eventsPerS, origins, data, CFG.stepS),
      ]);
      loopDelay.disable();
      const cpu = cpuDelta(procs, cpu0, cpuSample(procs, infra.database));
      eventsWindow = {
        from,
        to: Date.now(),
        // cores each component used during the step (is the delivery worker CPU-bound?)
        cores: Object.fromEntries(
          Object.entries({ ...byComponent(cpu.per), postgres: cpu.postgres, nats: cpu.nats, client: cpu.client }).map(
            ([k, v]) => [k, round(coresOf(v, cpu.wallMs), 3)],
          ),
        ),
        // the bench client's event-loop delay, ms (perf_hooks histogram, ns → ms)
        clientLoopDelayMs: {
          p50: round(loopDelay.percentile(50) / 1e6, 1),
          p99: round(loopDelay.percentile(99) / 1e6, 1),
          max: round(loopDelay.max / 1e6, 1),
        },
        requests: mix.requests,
        mixFailed: Object.values(mix.routes).reduce((n, r) => n + r.errors + r.rejected, 0),
        comments: extra.sent,
        commentsFailed: extra.failed,
        commentStatuses: extra.statuses,
      };
    }
    if (CFG.kill && topo.forums >= 2) out.kill = await killStep(procs, origins, data, held?.rate ?? CFG.startRate);
    const loadEnd = Date.now();
    log(`  draining webhooks (≤ ${CFG.drainS} s)`);
    const d = await drain(sql, head, receivers.receivers, CFG.drainS * 1000);
    await receivers.sync(); // every arrival so far recorded (the receivers run in their own thread)
    const keys = d.feed.map((f) => f.key);
    const healthy = receivers.receivers.filter((r) => !r.slow);
    const slowOnes = receivers.receivers.filter((r) => r.slow);
    const missed = healthy.map((r) => missedCount(keys, r.keys));
    const rnd = (x) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, k === "n" ? v : round(v, 0)]));
    out.webhooks = {
      endpoints: receivers.receivers.length,
      slow: slowOnes.length,
      slowMs: CFG.webhookSlowMs,
      events: keys.length,
      eventsPerS: round(keys.length / ((loadEnd - loadStart) / 1000), 2),
      lag: rnd(lagSummary(healthy.flatMap((r) => r.lags))),
      missed: missed.reduce((a, b) => a + b, 0),
      healthyComplete: missed.filter((m) => m === 0).length,
      healthy: healthy.length,
      slowReceived: slowOnes.map((r) => r.keys.size),
      slowLag: rnd(lagSummary(slowOnes.flatMap((r) => r.lags))),
      drainS: round(d.waitedMs / 1000, 1),
      feedLag: rnd(lagSummary(d.feed.map((f) => f.lagMs))),
    };
    if (eventsWindow) {
      const { from, to } = eventsWindow;
      const inWindow = d.feed.filter((f) => f.recordedMs >= from && f.recordedMs < to);
      out.webhooks.eventsStep = {
        ...eventsWindow,
        seconds: round((to - from) / 1000, 1),
        feedEventsPerS: round(inWindow.length / ((to - from) / 1000), 2),
        lag: rnd(lagSummary(healthy.flatMap((r) => lagsBetween(r, from, to)))),
        feedLag: rnd(lagSummary(inWindow.map((f) => f.lagMs))),
      };
    }
    log(`  webhooks: ${JSON.stringify(out.webhooks)}`);
  } finally {
    streams?.close();
    await deleteWebhooks(origins[0], hooks);
    await receivers?.close();
    await sys.stop();
  }
  return out;
}

/** The last step that held (p99 ≤ 1 s, errors ≤ 1 %), or the first step when none held. */
function heldStep(t) {
  return [...t.steps].reverse().find((s) => !s.broke) ?? t.steps[0];
}

/** Markdown of the whole run. */
function markdown(run) {
  const L = [];
  const rate = peakRate(MODEL.dailyAgents, MODEL.peakFactor);
  L.push(`## bench:mix — ${run.at}`, "");
  L.push(
    `${run.machine.cpus} × ${run.machine.cpu}, node ${run.machine.node}; load average ${run.machine.loadAvgAtStart.join(" / ")} at start, ${run.loadAvgAtEnd.join(" / ")} at the end ` +
      `(the machine is shared: absolute rates are noisy, CPU ms per request much less). Seeded in SQL: ${run.config.agents.toLocaleString("en")} agents ` +
      `(${run.seed.agentsS} s), ${run.config.posts.toLocaleString("en")} posts (${run.seed.postsS} s); ${run.config.active.toLocaleString("en")} active agents; ` +
      `knowledge: ${run.config.search === "postgres" ? "the PostgreSQL engine (docs/design/search-and-translation.md#the-postgresql-engine), indexed once at the first start" : "in-memory index rebuilt from every post at start"}; ${run.config.warmupS} s warm-up; ${run.config.sse} idle SSE streams; steps of ${run.config.stepS} s ` +
      `from ${run.config.startRate} requests/s × ${run.config.factor}; mix per agent per day ${JSON.stringify(DAILY_MIX)} (${perAgentPerDay()} requests). Run took ${run.seconds} s.`,
    "",
  );
  for (const t of run.topologies) {
    L.push(`### ${t.gateways} gateway(s) × ${t.forums} forum(s)${t.error ? ` — FAILED: ${t.error}` : ""}`, "");
    if (!t.steps?.length) continue;
    L.push(`SSE streams open: ${t.sseOpen}/${run.config.sse}.`, "");
    if (t.sse?.with) {
      const w = t.sse.without;
      const x = t.sse.with;
      const per = t.sseOpen ? round(((x.gateways - w.gateways) * 1000) / t.sseOpen, 4) : null;
      L.push(
        `Idle (no load), ${x.seconds} s each: the gateways use ${w.gateways} cores without the streams and ${x.gateways} with ${t.sseOpen} ` +
          `(${per ?? "n/a"} ms of CPU per stream per second; PostgreSQL ${w.postgres} → ${x.postgres}, NATS ${w.nats} → ${x.nats}, bench client ${w.client} → ${x.client} cores).`,
        "",
      );
    }
    L.push(
      "| step | asked req/s | got req/s | p50 ms | p95 ms | p99 ms | errors | 4xx | commits/req | rows/req | WAL B/req* | load avg 1 min |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    );
    for (const s of t.steps)
      L.push(
        `| ${s.step}${s.broke ? " (broke)" : ""} | ${s.rate} | ${s.achieved} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.errors} | ${s.rejected} | ${s.db.commitsPerRequest} | ${s.db.rowsPerRequest} | ${s.db.walBytesPerRequest} | ${s.loadavg[0]} |`,
      );
    const h = heldStep(t);
    L.push(
      "",
      `Per route at step ${h.step} (${h.achieved} req/s):`,
      "",
      "| route | n | p50 ms | p95 ms | p99 ms | errors | 4xx | non-2xx statuses |",
      "|---|---:|---:|---:|---:|---:|---:|---|",
    );
    for (const [k, r] of Object.entries(h.routes))
      L.push(
        `| ${k} | ${r.n} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.errors} | ${r.rejected} | ${
          Object.entries(r.statuses)
            .map(([c, n]) => `${c}×${n}`)
            .join(" ") || "—"
        } |`,
      );
    const comps = Object.keys(h.cpuMsPerRequest);
    L.push(
      "",
      `CPU ms per request (of the whole mix) by component, per step:`,
      "",
      `| step | ${comps.join(" | ")} |`,
      `|---:|${comps.map(() => "---:").join("|")}|`,
    );
    for (const s of t.steps) L.push(`| ${s.step} | ${comps.map((c) => s.cpuMsPerRequest[c] ?? "").join(" | ")} |`);
    const replicated = Object.keys(h.requestsPerReplica).filter((k) => {
      const name = k.split("#")[0];
      return Object.keys(h.requestsPerReplica).filter((x) => x.startsWith(`${name}#`)).length > 1;
    });
    if (replicated.length) {
      L.push(
        "",
        `Requests and CPU per replica at step ${h.step}:`,
        "",
        "| process | requests served | CPU ms/req of the mix |",
        "|---|---:|---:|",
      );
      for (const k of replicated)
        L.push(`| ${k} | ${h.requestsPerReplica[k] ?? "n/a"} | ${h.cpuMsPerRequestPerProcess[k] ?? ""} |`);
      if (t.share)
        L.push(
          "",
          `Spread at step ${t.share.step} (min/max of requests served; ±25 % is ≥ 0.75): forums ${t.share.forum ?? "n/a"}, gateways ${t.share.gateway ?? "n/a"}.`,
        );
    }
    const w = t.webhooks;
    if (w)
      L.push(
        "",
        `Webhooks: ${w.endpoints} \`*\` endpoints on local receivers, ${w.slow} slow (answer after ${w.slowMs} ms); ${w.events} feed events during the run ` +
          `(${w.eventsPerS}/s); drained ${w.drainS} s after the load.`,
        "",
        "| | n | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
        `| delivery lag, healthy receivers (arrival − occurred) | ${w.lag.n} | ${w.lag.p50} | ${w.lag.p95} | ${w.lag.p99} | ${w.lag.max} |`,
        `| delivery lag, slow receivers | ${w.slowLag.n} | ${w.slowLag.p50} | ${w.slowLag.p95} | ${w.slowLag.p99} | ${w.slowLag.max} |`,
        `| feed lag (recorded − occurred) | ${w.feedLag.n} | ${w.feedLag.p50} | ${w.feedLag.p95} | ${w.feedLag.p99} | ${w.feedLag.max} |`,
        ...(w.eventsStep
          ? [
              `| events step (${w.eventsStep.feedEventsPerS} events/s): delivery lag, healthy receivers | ${w.eventsStep.lag.n} | ${w.eventsStep.lag.p50} | ${w.eventsStep.lag.p95} | ${w.eventsStep.lag.p99} | ${w.eventsStep.lag.max} |`,
              `| events step: feed lag | ${w.eventsStep.feedLag.n} | ${w.eventsStep.feedLag.p50} | ${w.eventsStep.feedLag.p95} | ${w.eventsStep.feedLag.p99} | ${w.eventsStep.feedLag.max} |`,
            ]
          : []),
        "",
        `Healthy receivers with every event: ${w.healthyComplete}/${w.healthy}; events missed by healthy receivers: ${w.missed}; ` +
          (w.eventsStep
            ? `events step: ${w.eventsStep.comments} extra comments (${w.eventsStep.commentsFailed} not 2xx: ${JSON.stringify(w.eventsStep.commentStatuses)}) beside ${w.eventsStep.requests} requests of the mix (${w.eventsStep.mixFailed} not 2xx) in ${w.eventsStep.seconds} s; `
            : "") +
          (w.eventsStep?.cores ? `cores used in the events step: ${JSON.stringify(w.eventsStep.cores)}; ` : "") +
          (w.eventsStep?.clientLoopDelayMs
            ? `the bench client's event-loop delay in it (ms): ${JSON.stringify(w.eventsStep.clientLoopDelayMs)}; `
            : "") +
          `slow receivers got ${w.slowReceived.join(", ") || "—"} of ${w.events}.`,
      );
    const k = t.kill;
    if (k)
      L.push(
        "",
        `Kill step (${k.rate} req/s, ${k.requests} requests, ${k.victim} SIGKILLed half-way; p99 ${k.p99} ms): forum calls served before it ` +
          `${Object.entries(k.forumCallsBefore)
            .map(([p, n]) => `${p} ${n}`)
            .join(
              ", ",
            )} (min/max ${k.forumShareBefore}). In flight at the kill: ${k.inFlightAtKill} requests, ${k.inFlightWritesAtKill} of them unkeyed writes. ` +
          `Failed: ${k.failed} (not through the forum — search — ${k.failedNotThroughForum ?? 0}; forum reads ${k.failedReads}, unkeyed writes in flight at the kill ${k.failedWritesInFlight}, unkeyed writes sent after it ${k.failedWritesAfter}` +
          `${
            k.failed
              ? `; ${Object.entries(k.failures)
                  .map(([r, n]) => `${r}×${n}`)
                  .join(", ")}`
              : ""
          }). ${k.held ? "No failure beyond the in-flight ones." : `${k.beyond} failure(s) beyond the in-flight ones.`}`,
      );
    L.push("");
  }
  const base = run.topologies.find((t) => t.steps?.length);
  if (base) {
    const h = heldStep(base);
    L.push(
      `### Cores per component at the peak of 100k daily agents (5× peak factor)`,
      "",
      `${rate.toFixed(0)} requests/s (${MODEL.dailyAgents.toLocaleString("en")} × ${perAgentPerDay()} / 86,400 × ${MODEL.peakFactor}), from the CPU ms per request of ` +
        `${base.gateways}×${base.forums} step ${h.step} (${h.achieved} req/s); replicas at ≤ 60 % of a core each, at least 2.`,
      "",
      "| component | CPU ms/request | cores at peak | replicas |",
      "|---|---:|---:|---:|",
    );
    for (const [k, ms] of Object.entries(h.cpuMsPerRequest)) {
      if (k === "client") continue;
      const c = coresAt(ms, rate);
      const server = k === "postgres" || k === "nats";
      L.push(`| ${k}${server ? " (server)" : ""} | ${ms} | ${c.cores.toFixed(2)} | ${server ? "—" : c.replicas} |`);
    }
    L.push(
      "",
      `Rows per request and bytes per row by table (${base.gateways}×${base.forums} step ${h.step}):`,
      "",
      "| table | rows/request | bytes/row (incl. indexes) |",
      "|---|---:|---:|",
    );
    for (const [k, v] of Object.entries(h.tables).sort((a, b) => b[1].rowsPerRequest - a[1].rowsPerRequest))
      L.push(`| ${k} | ${v.rowsPerRequest} | ${v.bytesPerRow ?? "n/a"} |`);
    if (run.stream)
      L.push(
        "",
        `JetStream stream at the end: ${run.stream.messages.toLocaleString("en")} events, ${run.stream.bytes.toLocaleString("en")} bytes (${run.stream.bytesPerMessage} bytes per event, subject and headers included).`,
      );
    L.push(
      "",
      "\\* WAL is the server's position (cluster-wide): other databases' writes on the shared server count too, an upper bound.",
    );
  }
  return L.join("\n") + "\n";
}

cleanupOnSignalsAndCrashes();
if (!env.DATABASE_URL || !env.NATS_URL) {
  console.error("bench:mix needs DATABASE_URL and NATS_URL (the distributed topology on real PostgreSQL and NATS)");
  process.exit(1);
}
const run = {
  at: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    node: process.version,
    loadAvgAtStart: os.loadavg().map((x) => round(x, 2)),
  },
  config: CFG,
  model: { ...MODEL, peakRequestsPerS: peakRate(MODEL.dailyAgents, MODEL.peakFactor) },
  topologies: [],
};
let failed = false;
try {
  const infra = await createDistributedInfra(env.DATABASE_URL, env.NATS_URL);
  log(`database ${infra.database}: migrations (first start)`);
  const first = await startSystem({ mode: "distributed", root, port: await freePort(), infraEnv: infra.env });
  await first.stop();
  // search_path on the forum's schema, as its own connections have it: the posts' tag trigger
  // (forum_count_post_tags) names tag_counts unqualified; every other statement here is qualified
  const sql = new pg.Client({ connectionString: infra.sqlUrl, options: "-c search_path=forum" });
  sql.on("error", () => undefined);
  await sql.connect();
  onCleanup("close the bench:mix SQL client", () => sql.end());
  log(`seeding ${CFG.agents.toLocaleString("en")} agents in SQL`);
  const seeded = await seedAgents(sql, CFG.agents, CFG.active, (m) => log(`  ${m}`));
  log(`seeding ${CFG.posts.toLocaleString("en")} posts in SQL`);
  const posts = await seedPosts(sql, CFG.posts, seeded.agents.slice(0, 1000), 20_000, (m) => log(`  ${m}`));
  const cursors = await randomHotCursors(sql, 2000);
  run.seed = { agentsS: seeded.seconds, postsS: posts.seconds };
  const data = { agents: seeded.agents, postIds: posts.postIds, forumCursors: cursors, cursors: [] };
  log(`seeded: agents ${seeded.seconds} s, posts ${posts.seconds} s`);
  for (const topo of CFG.seedOnly ? [] : CFG.topologies) {
    try {
      run.topologies.push(await runTopology(topo, infra, data, sql));
    } catch (err) {
      failed = true;
      log(`topology ${topo.gateways}×${topo.forums} FAILED: ${err.stack}`);
      run.topologies.push({ ...topo, error: err.message.split("\n")[0], steps: [] });
    }
  }
  run.stream = await streamState(infra.env);
} catch (err) {
  failed = true;
  log(`FAILED: ${err.stack}`);
} finally {
  await cleanupAll();
}
run.loadAvgAtEnd = os.loadavg().map((x) => round(x, 2));
run.seconds = Math.round((performance.now() - t0) / 1000);
run.seed ??= { agentsS: null, postsS: null };
const md = markdown(run);
const dir = join(root, "test/bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "mix-latest.json"), JSON.stringify(run, null, 2) + "\n");
writeFileSync(join(dir, "mix-latest.md"), md);
console.log(md);
process.exit(failed ? 1 : 0);
