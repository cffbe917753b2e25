#!/usr/bin/env node
// One process of the search bench (docs/design/search-and-translation.md), spawned by search-scale.mjs:
//   build <databaseUrl> <posts> <seed>: indexes the corpus (search-corpus.mjs) with the all-in-one's
//     engine (PostgresEngine, the `knowledge` schema of the embedded PostgreSQL at <databaseUrl>),
//     marks it complete, then applies 100 changes as events;
//   query <databaseUrl> <posts> <seed> <queries>: a restart — opens the index (time to ready), then
//     times searches and duplicate checks on it, and single searches of the index's most frequent
//     words (the bounded candidates of docs/design/search-and-translation.md#bounded-candidates; BENCH_SEARCH_UNBOUNDED=1 reads every match
//     instead, the engine before that ADR, for an A/B on the same index; BENCH_SEARCH_BOUNDS=5000,3000,1000
//     sets exactMatches, recentWindow, titleCandidates and optionally titleReach).
// Prints one JSON object on stdout. Run with --expose-gc (RSS/heap are read after a full GC).
import { PostgresEngine, SEARCH_BOUNDS } from "@aps/knowledge";
import { SIMILAR_MIN_SCORE, similarQuery } from "@aps/knowledge/similar";
import { createLogger, openDatabase } from "@aps/platform";
import { pepsDatasetPath, seededRandom } from "@aps/testkit";
import { loadPeps, postAt } from "./search-corpus.mjs";

const [cmd, databaseUrl, postsArg, seedArg, queriesArg] = process.argv.slice(2);
const log = createLogger("search-bench", "warn");
const posts = Number(postsArg);
const seed = Number(seedArg);
const datasetAt = performance.now();
const peps = loadPeps(process.env.APS_PEPS_DATASET || pepsDatasetPath());
const datasetMs = performance.now() - datasetAt;
/** BENCH_SEARCH_UNBOUNDED=1: every match read, whatever the words (the engine before docs/design/search-and-translation.md#bounded-candidates). */
/** BENCH_SEARCH_BOUNDS=exactMatches,recentWindow,titleCandidates[,titleReach]: other bounds, to tune them. */
const asked = process.env.BENCH_SEARCH_BOUNDS?.split(",").map(Number);
const bounds =
  process.env.BENCH_SEARCH_UNBOUNDED === "1"
    ? { ...SEARCH_BOUNDS, exactMatches: Number.POSITIVE_INFINITY }
    : asked?.length === 3 || asked?.length === 4
      ? {
          exactMatches: asked[0],
          recentWindow: asked[1],
          titleCandidates: asked[2],
          titleReach: asked[3] ?? SEARCH_BOUNDS.titleReach,
        }
      : SEARCH_BOUNDS;
/** The index of the all-in-one: the `knowledge` schema, a pool as small as the all-in-one's (2). */
const open = async () => {
  const db = await openDatabase({ url: databaseUrl, schema: "knowledge", log, poolSize: 2 });
  return { db, engine: new PostgresEngine(db, log, bounds) };
};
const memory = () => {
  globalThis.gc?.();
  const m = process.memoryUsage();
  return { rssMiB: Math.round(m.rss / 2 ** 20), heapMiB: Math.round(m.heapUsed / 2 ** 20) };
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};
const out = {};

if (cmd === "build") {
  const { db, engine } = await open();
  await engine.init();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const BATCH = 1000;
  for (let i = 0; i < posts; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(posts, i + BATCH); j++) batch.push(postAt(peps, j, seed));
    await engine.upsert(batch);
    if ((i / BATCH) % 10 === 9) process.stderr.write(`  indexed ${i + BATCH} posts\n`);
  }
  out.indexSeconds = Math.round((performance.now() - t0) / 100) / 10;
  const c1 = process.cpuUsage(c0);
  out.indexCpuSeconds = Math.round((c1.user + c1.system) / 1e5) / 10;
  const t1 = performance.now();
  await engine.checkpoint();
  await db.pool.query("VACUUM ANALYZE knowledge.documents, knowledge.terms");
  out.snapshotSeconds = Math.round((performance.now() - t1) / 100) / 10;
  // 100 events after the build: a status change per post, each its own transaction
  for (let k = 0; k < 100; k++) {
    const p = postAt(peps, k, seed);
    await engine.upsert([{ ...p, tags: ["post", "arch", "review"] }], `bench-event-${k}`);
  }
  out.memory = memory();
  out.bytesOnDisk = await engine.sizeOnDisk();
  out.documents = (await engine.state()).docs;
  await db.close();
} else if (cmd === "query") {
  const queries = Number(queriesArg);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const { db, engine } = await open();
  await engine.init();
  out.loadMs = Math.round(performance.now() - t0);
  const c1 = process.cpuUsage(c0);
  out.loadCpuMs = Math.round((c1.user + c1.system) / 1000);
  // from the process's start: node, imports, the PEP dataset (the bench's text source) and the load
  out.processReadyMs = Math.round(performance.now());
  out.datasetMs = Math.round(datasetMs);
  out.restored = engine.restored;
  const state = await engine.state();
  out.position = { eventId: state.eventId, applied: state.applied };
  out.documents = state.docs;
  const rnd = seededRandom(seed + 1);
  const pick = () => postAt(peps, Math.floor(rnd() * posts), seed);
  const distinct = (text, min) =>
    [...new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? [])].filter((w) => w.length >= min);
  /** Wall time and this process's CPU time (user + system) of one query, in ms. */
  const time = async (fn) => {
    const t = performance.now();
    const c = process.cpuUsage();
    const r = await fn();
    const cpu = process.cpuUsage(c);
    return { ms: performance.now() - t, cpuMs: (cpu.user + cpu.system) / 1000, r };
  };
  // warm-up (JIT, connections), not recorded
  for (let k = 0; k < 20; k++) await engine.search(distinct(pick().title, 4).slice(0, 2).join(" "), [], 10);
  const search = [];
  const typo = [];
  const similar = [];
  const cpu = { search: [], typo: [], similar: [] };
  let bodyFound = 0;
  let similarFound = 0;
  for (let k = 0; k < queries; k++) {
    const p = pick();
    const words = distinct(p.body, 6);
    const three = words.slice(0, 3).join(" ");
    const s = await time(() => engine.search(three, [], 10));
    search.push(s.ms);
    cpu.search.push(s.cpuMs);
    if (s.r.hits.some((h) => h.id === p.id)) bodyFound++;
    const w = words[0] ?? "proposal";
    const typoed = w.length >= 6 ? w[0] + w[2] + w[1] + w.slice(3) : w; // adjacent swap, not on the first letter
    const ty = await time(() => engine.search(`${typoed} ${words[1] ?? ""}`.trim(), [], 10));
    typo.push(ty.ms);
    cpu.typo.push(ty.cpuMs);
    const q = similarQuery(p.title, p.body);
    const opts = { match: "any", minScore: SIMILAR_MIN_SCORE };
    const si = await time(() => engine.search(q, ["post"], 5, opts));
    similar.push(si.ms);
    cpu.similar.push(si.cpuMs);
    if (si.r.hits.some((h) => h.id === p.id)) similarFound++;
  }
  // the index's 10 most frequent words (all but the stopwords an agent would not type alone), 3 times each
  const frequent = (
    await db.pool.query("SELECT term FROM knowledge.terms WHERE length(term) >= 4 ORDER BY df DESC LIMIT 10")
  ).rows.map((r) => r.term);
  const common = [];
  const commonCpu = [];
  for (let k = 0; k < 3; k++)
    for (const w of frequent) {
      const c = await time(() => engine.search(w, [], 10));
      common.push(c.ms);
      commonCpu.push(c.cpuMs);
    }
  out.bounds = bounds.exactMatches === Number.POSITIVE_INFINITY ? "none" : bounds;
  out.common = {
    words: frequent,
    p50: pct(common, 50),
    p95: pct(common, 95),
    max: pct(common, 100),
    cpuP50: pct(commonCpu, 50),
  };
  out.queries = queries;
  const cpuPct = (k) => ({ cpuP50: pct(cpu[k], 50), cpuP95: pct(cpu[k], 95) });
  out.search = { p50: pct(search, 50), p95: pct(search, 95), ...cpuPct("search"), foundTop10: bodyFound / queries };
  out.typo = { p50: pct(typo, 50), p95: pct(typo, 95), ...cpuPct("typo") };
  out.similar = {
    p50: pct(similar, 50),
    p95: pct(similar, 95),
    ...cpuPct("similar"),
    foundTop5: similarFound / queries,
  };
  out.loadAvg = (await import("node:os")).loadavg().map((x) => Math.round(x * 10) / 10);
  out.memory = memory();
  await db.close();
} else {
  throw new Error(`unknown command ${cmd}`);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
