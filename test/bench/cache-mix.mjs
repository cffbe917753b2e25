#!/usr/bin/env node
// `npm run bench:cache` — the gateways' read-cache hit ratio under votes, with 1, 2 and 4 gateway
// replicas (docs/design/edge.md#cache-invalidation-by-events). The distributed topology (deploy/local/start.mjs,
// REPLICAS_GATEWAY=N, docs/design/operations.md#local-replicas) on the real PostgreSQL and NATS (DATABASE_URL, NATS_URL; a fresh
// database and stream per run, dropped after); agents and posts seeded through the API; then an
// open loop (Poisson arrivals) of anonymous hot-list reads spread evenly over the gateways and of
// votes by random agents on random posts through random gateways. At the end each gateway's
// `/metrics` gives its cache lookups by result (aps_gateway_cache_lookups_total{cache="read"}):
// the hit ratio is (hit + stale + joined) / every lookup of a cacheable read.
// Env: BENCH_CACHE_GATEWAYS (1,2,4), BENCH_CACHE_READS_PER_S (200), BENCH_CACHE_VOTES_PER_S (20),
// BENCH_CACHE_SECONDS (15), BENCH_CACHE_AGENTS (40), BENCH_CACHE_POSTS (60).
// Prints a markdown table on stdout, progress on stderr; exits 1 when a run fails or a read errs.
import { fileURLToPath } from "node:url";
import { call, seedViaApi } from "./lib/api.mjs";
import { cleanupAll, cleanupOnSignalsAndCrashes } from "./lib/cleanup.mjs";
import { createDistributedInfra } from "./lib/infra.mjs";
import { freePort, startSystem } from "./lib/system.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const num = (name, dflt) => Number(process.env[name] ?? dflt);
const GATEWAYS = (process.env.BENCH_CACHE_GATEWAYS ?? "1,2,4").split(",").map(Number);
const READS_PER_S = num("BENCH_CACHE_READS_PER_S", 200);
const VOTES_PER_S = num("BENCH_CACHE_VOTES_PER_S", 20);
const SECONDS = num("BENCH_CACHE_SECONDS", 15);
const AGENTS = num("BENCH_CACHE_AGENTS", 40);
const POSTS = num("BENCH_CACHE_POSTS", 60);
const log = (m) => process.stderr.write(`[bench:cache] ${m}\n`);

/** Exponential inter-arrival time (ms) of a Poisson process of `perSecond` events a second. */
const gapMs = (perSecond) => (-Math.log(1 - Math.random()) / perSecond) * 1000;

/**
 * Fires `fire()` at Poisson arrivals of `perSecond` for `seconds`, never waiting for an answer
 * (open loop); resolves once every fired call has settled, with their count and failures.
 */
async function openLoop(perSecond, seconds, fire) {
  const end = performance.now() + seconds * 1000;
  const pending = [];
  let failures = 0;
  for (let next = performance.now(); next < end; next += gapMs(perSecond)) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(fire().catch(() => void failures++));
  }
  await Promise.all(pending);
  return { calls: pending.length, failures };
}

/** Sums aps_gateway_cache_lookups_total{cache="read",result=…} of one gateway's /metrics by result. */
async function lookups(origin) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const out = { hit: 0, stale: 0, joined: 0, miss: 0, bypass: 0 };
  for (const m of text.matchAll(/^aps_gateway_cache_lookups_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.cache === "read" && labels.result in out) out[labels.result] += Number(m[2]);
  }
  return out;
}

/** One run with `n` gateways; resolves its row of the table. */
async function run(n) {
  const infra = await createDistributedInfra(process.env.DATABASE_URL, process.env.NATS_URL);
  const port = await freePort();
  const sys = await startSystem({
    mode: "distributed",
    root,
    port,
    infraEnv: { ...infra.env, REPLICAS_GATEWAY: String(n) },
  });
  try {
    const origins = Array.from({ length: n }, (_, i) => `http://127.0.0.1:${port + i}`);
    const seeded = await seedViaApi(`${origins[0]}/v1`, AGENTS, POSTS);
    const before = await Promise.all(origins.map(lookups));
    let r = 0;
    log(`${n} gateway(s): ${READS_PER_S} reads/s and ${VOTES_PER_S} votes/s for ${SECONDS} s`);
    const [reads, votes] = await Promise.all([
      openLoop(READS_PER_S, SECONDS, async () => {
        const res = await fetch(`${origins[r++ % n]}/v1/posts?sort=hot&limit=25`);
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(String(res.status));
      }),
      openLoop(VOTES_PER_S, SECONDS, async () => {
        const a = seeded.agents[Math.floor(Math.random() * seeded.agents.length)];
        const p = seeded.postIds[Math.floor(Math.random() * seeded.postIds.length)];
        const g = origins[Math.floor(Math.random() * n)];
        await call(`${g}/v1`, "POST", `/posts/${p}/vote`, a.apiKey, { vote: Math.random() < 0.7 ? 1 : -1 });
      }),
    ]);
    const after = await Promise.all(origins.map(lookups));
    const sum = { hit: 0, stale: 0, joined: 0, miss: 0 };
    for (let i = 0; i < n; i++) for (const k of Object.keys(sum)) sum[k] += after[i][k] - before[i][k];
    const all = sum.hit + sum.stale + sum.joined + sum.miss;
    return {
      n,
      reads,
      votes,
      ...sum,
      ratio: all ? (sum.hit + sum.stale + sum.joined) / all : 0,
    };
  } finally {
    await sys.stop();
    await infra.drop();
  }
}

cleanupOnSignalsAndCrashes();
if (!process.env.DATABASE_URL || !process.env.NATS_URL) {
  console.error("bench:cache needs DATABASE_URL and NATS_URL (the distributed topology)");
  process.exit(1);
}
const rows = [];
let failed = false;
try {
  for (const n of GATEWAYS) rows.push(await run(n));
} catch (err) {
  console.error(err);
  failed = true;
} finally {
  await cleanupAll();
}
console.log(
  [
    `| gateways | reads (failed) | votes (failed) | hit | stale | joined | miss | hit ratio |`,
    `|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...rows.map(
      (r) =>
        `| ${r.n} | ${r.reads.calls} (${r.reads.failures}) | ${r.votes.calls} (${r.votes.failures}) | ${r.hit} | ${r.stale} | ${r.joined} | ${r.miss} | ${(r.ratio * 100).toFixed(1)} % |`,
    ),
  ].join("\n"),
);
process.exit(failed || rows.some((r) => r.reads.failures > 0) ? 1 : 0);
