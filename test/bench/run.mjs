#!/usr/bin/env node
// `npm run bench` (method: docs/design/tests.md#benchmarks; how to read it: docs/performance.md).
// ONE run measures, per mode, each figure beside a baseline
// measured the same way on this machine in this run:
//   - reads (autocannon, same connections and duration): the system vs a bare node:http process
//     and a minimal express 5 process serving the system's own recorded bytes;
//   - votes: random agent/post/±1 vs a raw INSERT … ON CONFLICT DO UPDATE loop on the same
//     PostgreSQL at the same concurrency, then the tallies checked against the bench's own record;
//     then the contended case (few posts, many voters — 60 agents on 200 posts,
//     BENCH_CONTENDED_AGENTS / BENCH_CONTENDED_POSTS) the same way against its own raw upsert;
//   - start to ready on an empty and on an existing data folder;
//   - memory of the whole process tree (RSS sum and PSS sum);
//   - hot-list p99 at 10k vs 1M posts seeded in SQL (BENCH_SCALE=0 skips it);
//   - search at scale: the embedded engine's durable index of 100,000 posts generated from the PEP
//     dataset — search and /posts/similar p50/p95, size on disk, RSS, time to ready after a restart
//     (lib/search-scale.mjs, docs/design/search-and-translation.md#duplicate-check; BENCH_SEARCH_POSTS=0 skips it).
// Modes: embedded (`npm start` entry) always; distributed (deploy/local/start.mjs) too when
// DATABASE_URL and NATS_URL are set (on a fresh database and stream, dropped at the end).
// Env: BENCH_DURATION (s, 10), BENCH_WARMUP (s, 2), BENCH_CONNECTIONS (50), BENCH_AGENTS (200),
// BENCH_POSTS (1000), BENCH_SCALE (once = in the first mode with SQL access; all; 0 = skip),
// BENCH_SCALE_POSTS (1000000), BENCH_SEARCH_POSTS (100000; 0 = skip the search section),
// BENCH_SEARCH_QUERIES (300), BENCH_SETTLE_MAX_S (60), BENCH_MODES
// (embedded,distributed), BENCH_STRICT (1 = exit 1 when a goal fails), BENCH_SMALL (1 = the small
// run below: smaller defaults for everything above).
// Prints progress on stderr, the markdown report on stdout, and writes test/bench/results/latest.{json,md}.
// Exits 1 when a mode failed to run, a tally was wrong or a read answered wrong content (every 2xx
// body of every measured read load is checked), 0 otherwise. CI (.ci/run) runs it once small:
// BENCH_SMALL=1 (20 agents, 60 posts, 10 connections, 2 s loads, no scale step, 2,000 posts in the
// search section), so it cannot rot.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { call, seedViaApi } from "./lib/api.mjs";
import { recordResponses, startBaseline } from "./lib/baselines.mjs";
import { cleanupAll, cleanupOnSignalsAndCrashes, cleanupStarted, onCleanup, wasSignalled } from "./lib/cleanup.mjs";
import { createDistributedInfra, embeddedSqlUrl } from "./lib/infra.mjs";
import { LOAD, load, randomPathRequest, SMALL } from "./lib/load.mjs";
import { cpuDelta, cpuSample, serviceProcesses } from "./lib/mix-probes.mjs";
import { sampleTreeMemory, treeCpuSeconds, treeMemory, waitQuiet } from "./lib/proctree.mjs";
import { goals, modeMarkdown } from "./lib/report.mjs";
import { explainHot, gatewayHotCursors, openSql, randomHotCursors, seedPostsTo } from "./lib/scale.mjs";
import { freePort, startSystem } from "./lib/system.mjs";
import { benchSearchScale, SEARCH_GOALS, searchMarkdown } from "./lib/search-scale.mjs";
import { rawUpsert } from "./lib/upsert.mjs";
import { checkTallies, voteOracle } from "./lib/votes.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = process.env;
const CFG = {
  agents: Number(env.BENCH_AGENTS ?? (SMALL ? 20 : 200)),
  posts: Number(env.BENCH_POSTS ?? (SMALL ? 60 : 1000)),
  /** "once": the scale step in the first mode with SQL access; "all": in every mode; "0": never (default of BENCH_SMALL=1) */
  scale:
    env.BENCH_SCALE === "0" || (SMALL && env.BENCH_SCALE === undefined)
      ? "0"
      : env.BENCH_SCALE === "all"
        ? "all"
        : "once",
  smallPosts: 10_000,
  /** search section (docs/design/search-and-translation.md#duplicate-check): generated posts indexed by the embedded engine, 0 = skip */
  searchPosts: Number(env.BENCH_SEARCH_POSTS ?? (SMALL ? 2_000 : 100_000)),
  searchQueries: Number(env.BENCH_SEARCH_QUERIES ?? (SMALL ? 50 : 300)),
  scalePosts: Number(env.BENCH_SCALE_POSTS ?? 1_000_000),
  /** the contended vote case (60 agents on 200 posts; at most the seed's) */
  contendedAgents: Number(env.BENCH_CONTENDED_AGENTS ?? 60),
  contendedPosts: Number(env.BENCH_CONTENDED_POSTS ?? 200),
  /** distinct /posts/{id} paths and hot-list cursors loaded at random */
  postPaths: 100,
  cursors: 5000,
};
const HOT = "/v1/posts?sort=hot&limit=25";
const t0 = performance.now();
const log = (msg) => console.error(`[bench ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}`);

cleanupOnSignalsAndCrashes();
const tmp = mkdtempSync(join(os.tmpdir(), "aps-bench-"));
// Traversable by other users: as root, the embedded PostgreSQL server runs as user `postgres`.
chmodSync(tmp, 0o755);
onCleanup(`remove ${tmp}`, () => rmSync(tmp, { recursive: true, force: true }));

/**
 * Waits until the system's process tree is quiet (background work such as the knowledge index
 * rebuilt from every post after a start is done; at most BENCH_SETTLE_MAX_S, default 60 s), so
 * that a load measures the request path, not a start-up job. Returns `{ quietAfterMs, quiet }`.
 */
async function settle(sys, when) {
  const r = await waitQuiet(sys.pid, { maxMs: Number(env.BENCH_SETTLE_MAX_S ?? (SMALL ? 15 : 60)) * 1000 });
  log(`  ${r.quiet ? "quiet" : "still busy (gave up)"} ${(r.quietAfterMs / 1000).toFixed(1)} s ${when}`);
  return r;
}

/** GET loads of one path set against APS and both baselines (bare first, then express, then APS); `verify` checks every 2xx body. */
async function readTriplet(sys, request, responses, verify) {
  const bare = await startBaseline("bare", responses, tmp);
  const express = await startBaseline("express", responses, tmp);
  try {
    const out = {};
    for (const [name, origin] of [
      ["bare", bare.origin],
      ["express", express.origin],
      ["aps", sys.origin],
    ]) {
      log(`  load ${request.path.slice(0, 40)}… on ${name}`);
      out[name] = await load(origin, request, { verify });
    }
    return out;
  } finally {
    await bare.stop();
    await express.stop();
  }
}

/** Reads: the hot list and /posts/{id} (100 ids at random) vs the baselines serving the same bytes. */
async function benchReads(sys, seed) {
  const ids = [...seed.postIds].sort(() => Math.random() - 0.5).slice(0, CFG.postPaths);
  const postPaths = ids.map((id) => `/v1/posts/${id}`);
  const hotResp = await recordResponses(sys.origin, [HOT]);
  const postResp = await recordResponses(sys.origin, postPaths);
  const size = (rs) => Math.round(rs.reduce((s, r) => s + Buffer.from(r.body, "base64").length, 0) / rs.length);
  // Content checks (every 2xx answer of every measured load): the hot list has as many items as
  // when it was recorded, each a post of the seed; /posts/{id} is the post asked for.
  const known = new Set(seed.postIds);
  const hotItems = JSON.parse(Buffer.from(hotResp[0].body, "base64").toString()).items.length;
  if (hotItems === 0) throw new Error("the hot list is empty after seeding");
  const hotOk = (body) => {
    const items = JSON.parse(body).items;
    return items.length === hotItems && items.every((p) => known.has(p.id));
  };
  const postOk = (body, path) => JSON.parse(body).id === path.slice(path.lastIndexOf("/") + 1);
  log("reads: hot list");
  const hot = await readTriplet(sys, { method: "GET", path: HOT }, hotResp, hotOk);
  log("reads: /posts/{id}");
  const post = await readTriplet(sys, randomPathRequest(postPaths), postResp, postOk);
  return {
    hot: { ...hot, bodyBytes: size(hotResp), note: `${(size(hotResp) / 1024).toFixed(1)} KiB body` },
    post: {
      ...post,
      bodyBytes: size(postResp),
      note: `${ids.length} ids at random, ${(size(postResp) / 1024).toFixed(1)} KiB body`,
    },
  };
}

/**
 * A CPU sample of the system under load (docs/design/tests.md#mixed-load-bench): per service process and the PostgreSQL
 * backends of `database` (distributed), or the whole process tree, embedded PostgreSQL included.
 */
function cpuOf(sys, database) {
  if (!database) return { tree: treeCpuSeconds(sys.pid), self: process.cpuUsage() };
  const procs = serviceProcesses(sys.pid, sys.processes);
  return { procs, sample: cpuSample(procs, database) };
}

/**
 * CPU ms per request between two `cpuOf` samples over `n` requests: `{ <service>: ms, postgres: ms }`
 * (distributed) or `{ tree: ms }` (embedded: the all-in-one and its PostgreSQL together).
 */
function cpuPerRequest(sys, a, b, n) {
  const r = (x) => Math.round((x / Math.max(1, n)) * 1000) / 1000;
  if (a.tree !== undefined) return { tree: r((b.tree - a.tree) * 1000) };
  const d = cpuDelta(a.procs, a.sample, b.sample);
  const out = {};
  for (const [k, v] of Object.entries(d.per)) out[k.split("#")[0]] = (out[k.split("#")[0]] ?? 0) + v;
  for (const k of Object.keys(out)) out[k] = r(out[k]);
  out.postgres = r(d.postgres);
  return out;
}

/**
 * Votes through HTTP with the oracle, then the tally check. `prior`: votes an earlier oracle
 * recorded on these agents and posts (the contended case runs on the first ones of the seed).
 * Returns the figures and the oracle (its `latestVotes()` seed the next case).
 */
async function benchVotes(sys, agents, postIds, label, prior, database) {
  log(`votes${label}: APS`);
  const oracle = voteOracle(agents, postIds, prior);
  // the warm-up first, outside the CPU samples (the oracle records its votes too)
  if (LOAD.warmup > 0) await load(sys.origin, oracle.request, { duration: LOAD.warmup, warmup: 0 });
  const before = cpuOf(sys, database);
  const aps = await load(sys.origin, oracle.request, { warmup: 0 });
  const cpuMsPerVote = cpuPerRequest(sys, before, cpuOf(sys, database), aps.ok + aps.non2xx);
  const settled = await oracle.settle(sys.base);
  log(`votes${label}: checking tallies`);
  const tally = await checkTallies(sys.base, oracle.expected());
  return {
    oracle,
    result: {
      connections: LOAD.connections,
      agents: agents.length,
      posts: postIds.length,
      aps,
      cpuMsPerVote,
      settled,
      rejected: oracle.rejected,
      pairs: oracle.pairs,
      tally,
    },
  };
}

/**
 * The raw upsert baseline on the system's PostgreSQL, or null with a note when it is not reachable.
 * Run outside the memory sampling: its backends are children of an embedded server.
 */
async function benchRawUpsert(agents, postIds, sqlUrl, label = "", database) {
  if (!sqlUrl) return { rawUpsert: null, rawUpsertNote: "no SQL access to the embedded database" };
  log(`votes${label}: raw upsert baseline`);
  let a = null;
  let b = null;
  const raw = await rawUpsert(
    sqlUrl,
    postIds,
    agents.map((x) => x.agentId),
    database ? { start: () => (a = cpuSample([], database)), stop: () => (b = cpuSample([], database)) } : {},
  );
  // PostgreSQL CPU ms per upsert (distributed: the backends of the system's database, which
  // include the system's own idle ones) over the measured loop
  if (a && b)
    raw.postgresCpuMsPerUpsert = Math.round((cpuDelta([], a, b).postgres / Math.max(1, raw.ok)) * 1000) / 1000;
  return { rawUpsert: raw };
}

/** Hot list first page and random keyset pages on the running system. */
async function hotLoads(sys, cursors) {
  const first = await load(sys.origin, { method: "GET", path: HOT });
  const deep = await load(sys.origin, randomPathRequest(cursors.map((c) => `${HOT}&cursor=${c}`)));
  return { first, deep };
}

/**
 * Scale: posts seeded in SQL to 10k, then one post created through the API (its event
 * invalidates any read cache, as SQL seeding sends none), EXPLAIN, loads; the same at 1M. Then
 * one restart with 1M posts, for the start time and the background work a start does with them
 * (informational, bounded by BENCH_SETTLE_MAX_S). Fills `out` step by step (a failure keeps
 * what was measured). `ctx.sys` is replaced by the restart;
 * `sqlUrlOf()` is re-read after it (an embedded server may come back on another port).
 */
async function benchScale(ctx, seed, sqlUrlOf, out) {
  const author = seed.agents[0];
  for (const [key, total] of [
    ["at10k", CFG.smallPosts],
    ["at1M", CFG.scalePosts],
  ]) {
    log(`scale: seeding ${total.toLocaleString("en")} posts in SQL`);
    const sql = await openSql(sqlUrlOf());
    try {
      const seeded = await seedPostsTo(sql.client, total, seed.agents, (m) => log(`  ${m}`));
      await call(ctx.sys.base, "POST", "/posts", author.apiKey, {
        title: `Bench marker at ${total} posts`,
        body: "Created through the API after the SQL seeding.",
        is_arch_design: false,
      });
      const quiet = await settle(ctx.sys, `after seeding ${total.toLocaleString("en")} posts`);
      const explain = await explainHot(sql.client);
      const cursors = await gatewayHotCursors(ctx.sys.origin, await randomHotCursors(sql.client, CFG.cursors));
      log(
        `scale: hot list at ${total.toLocaleString("en")} posts (hot index used: ${explain.firstPage.usesHotIndex}/${explain.deepPage.usesHotIndex})`,
      );
      const loads = await hotLoads(ctx.sys, cursors);
      out[key] = { posts: total, seed: seeded, settle: quiet, explain, ...loads, memory: treeMemory(ctx.sys.pid) };
    } finally {
      await sql.close();
    }
  }
  out.explain = out.at1M.explain;
  log(`scale: restarting with ${CFG.scalePosts.toLocaleString("en")} posts`);
  await ctx.sys.stop();
  ctx.sys = await ctx.start();
  const quiet = await settle(ctx.sys, `after the restart with ${CFG.scalePosts.toLocaleString("en")} posts`);
  out.restart = { lineMs: ctx.sys.lineMs, readyzMs: ctx.sys.readyzMs, settle: quiet, memory: treeMemory(ctx.sys.pid) };
}

/** The mode that ran the scale step (BENCH_SCALE=once runs it in one mode only: the forum query is the same in both). */
let scaleDone = null;

/** Runs every step for one mode; never throws (a failure is recorded in `error`). */
async function benchMode(mode) {
  const title =
    mode === "embedded"
      ? "embedded — `npm start` (services/all-in-one/dist/main.js, embedded defaults)"
      : "distributed — `deploy/local/start.mjs` (one process per service, real PostgreSQL + NATS)";
  const m = { mode, title };
  const ctx = { sys: null, start: null };
  let infra = null;
  const dataDir = join(tmp, `data-${mode}`);
  try {
    let sqlUrlOf;
    const port = await freePort();
    if (mode === "distributed") {
      infra = await createDistributedInfra(env.DATABASE_URL, env.NATS_URL);
      m.database = infra.database;
      sqlUrlOf = () => infra.sqlUrl;
      ctx.start = () => startSystem({ root, mode, port, infraEnv: infra.env });
    } else {
      mkdirSync(dataDir, { recursive: true });
      sqlUrlOf = () => embeddedSqlUrl(dataDir);
      ctx.start = () => startSystem({ root, mode, port, dataDir });
    }
    log(`${mode}: start on empty data`);
    ctx.sys = await ctx.start();
    m.start = { empty: { lineMs: ctx.sys.lineMs, readyzMs: ctx.sys.readyzMs } };
    await ctx.sys.stop();
    log(`${mode}: start on existing data`);
    ctx.sys = await ctx.start();
    m.start.existing = { lineMs: ctx.sys.lineMs, readyzMs: ctx.sys.readyzMs };
    const sqlUrl = sqlUrlOf();
    m.sqlAccess = Boolean(sqlUrl);
    if (!sqlUrl)
      m.sqlNote =
        "No SQL access to the embedded database (no $APS_DATA_DIR/postgres.url): raw-upsert baseline and SQL seeding are n/a.";
    await new Promise((r) => setTimeout(r, 1000));
    m.memory = { idle: treeMemory(ctx.sys.pid) };
    log(`${mode}: seeding ${CFG.agents} agents and ${CFG.posts} posts through the API`);
    const seed = await seedViaApi(ctx.sys.base, CFG.agents, CFG.posts);
    m.seed = { agents: CFG.agents, posts: CFG.posts, seconds: seed.seconds };
    m.seed.settle = await settle(ctx.sys, "after seeding");
    const sampler = sampleTreeMemory(ctx.sys.pid);
    const few = {
      agents: seed.agents.slice(0, CFG.contendedAgents),
      postIds: seed.postIds.slice(0, CFG.contendedPosts),
    };
    try {
      m.reads = await benchReads(ctx.sys, seed);
      const spread = await benchVotes(ctx.sys, seed.agents, seed.postIds, "", undefined, infra?.database);
      m.votes = spread.result;
      // Contended: few posts, many voters — more row contention on each post's tally.
      const label = ` contended (${few.agents.length} agents on ${few.postIds.length} posts)`;
      m.votesContended = (
        await benchVotes(ctx.sys, few.agents, few.postIds, label, spread.oracle.latestVotes(), infra?.database)
      ).result;
    } finally {
      const s = sampler.stop();
      m.memory.peak = s.peak;
      m.memory.end = s.last;
    }
    Object.assign(m.votes, await benchRawUpsert(seed.agents, seed.postIds, sqlUrl, "", infra?.database));
    Object.assign(
      m.votesContended,
      await benchRawUpsert(few.agents, few.postIds, sqlUrl, " contended", infra?.database),
    );
    if (CFG.scale === "0") m.scale = { skipped: "BENCH_SCALE=0" };
    else if (!sqlUrl) m.scale = { skipped: "no SQL access to the embedded database" };
    else if (CFG.scale === "once" && scaleDone)
      m.scale = { skipped: `measured in the ${scaleDone} mode (BENCH_SCALE=all: in every mode)` };
    else {
      scaleDone = mode;
      m.scale = {};
      await benchScale(ctx, seed, sqlUrlOf, m.scale);
    }
  } catch (err) {
    m.error = err.message.split("\n")[0];
    log(`${mode} FAILED: ${err.stack}`);
  } finally {
    await ctx.sys?.stop();
    await infra?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  m.goals = goals(m);
  return m;
}

const modes = (env.BENCH_MODES ?? "embedded,distributed").split(",").map((s) => s.trim());
const run = {
  at: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAvgAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  },
  config: { ...LOAD, ...CFG },
  modes: [],
};
let exitCode = 0;
try {
  if (modes.includes("embedded")) run.modes.push(await benchMode("embedded"));
  if (modes.includes("distributed") && !cleanupStarted()) {
    if (env.DATABASE_URL && env.NATS_URL) run.modes.push(await benchMode("distributed"));
    else log("distributed: skipped (DATABASE_URL and NATS_URL are not both set)");
  }
  if (CFG.searchPosts > 0 && !cleanupStarted()) {
    try {
      run.search = await benchSearchScale({
        posts: CFG.searchPosts,
        queries: CFG.searchQueries,
        seed: 18,
        tmp,
        log,
      });
    } catch (err) {
      run.search = { error: err.message.split("\n")[0] };
      log(`search FAILED: ${err.stack}`);
    }
  } else run.search = { skipped: "BENCH_SEARCH_POSTS=0" };
} finally {
  await cleanupAll();
}
if (wasSignalled()) process.exit(130); // abandoned run: no report (the signal handler normally exits first)
run.seconds = Math.round((performance.now() - t0) / 1000);
const md = [
  `## APS benchmark — ${run.at}`,
  "",
  `${run.machine.cpus} × ${run.machine.cpu}, ${run.machine.memGiB} GiB, node ${run.machine.node}, load average at start ${run.machine.loadAvgAtStart.join(" / ")}; ` +
    `autocannon ${LOAD.connections} connections × ${LOAD.duration} s (after ${LOAD.warmup} s warm-up) for every HTTP row; ${CFG.agents} agents, ${CFG.posts} posts; run took ${run.seconds} s.`,
  "",
  ...run.modes.flatMap((m) => [modeMarkdown(m), ""]),
  searchMarkdown(run.search),
  "",
].join("\n");
const dir = join(root, "test/bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "latest.json"), JSON.stringify(run, null, 2) + "\n");
writeFileSync(join(dir, "latest.md"), md);
console.log(md);
log(`wrote test/bench/results/latest.json and latest.md`);
/** Read loads whose content check failed: a wrong body, or no 2xx body checked at all. */
const wrongContent = (m) =>
  Object.entries(m.reads ?? {}).flatMap(([what, t]) =>
    ["bare", "express", "aps"]
      .filter((k) => t[k] && (t[k].wrong > 0 || t[k].checked === 0))
      .map((k) => `${m.mode} ${what} ${k}: ${t[k].wrong} wrong of ${t[k].checked} checked`),
  );
if (run.search?.error) exitCode = 1;
if (
  env.BENCH_STRICT === "1" &&
  run.search?.restart &&
  (run.search.restart.similar.p95 > SEARCH_GOALS.similarP95Ms || run.search.restart.loadMs > SEARCH_GOALS.readyMs)
)
  exitCode = 1;
for (const m of run.modes) {
  if (m.error || (m.votes && m.votes.tally.exact !== m.votes.tally.posts)) exitCode = 1;
  if (m.votes && m.votes.tally.posts === 0) exitCode = 1;
  if (m.votesContended && m.votesContended.tally.exact !== m.votesContended.tally.posts) exitCode = 1;
  for (const w of wrongContent(m)) {
    log(`WRONG CONTENT: ${w}`);
    exitCode = 1;
  }
  if (env.BENCH_STRICT === "1" && m.goals.some((g) => g.pass === false)) exitCode = 1;
}
process.exit(exitCode);
