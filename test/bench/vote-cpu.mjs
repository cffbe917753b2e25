#!/usr/bin/env node
// CPU ms per distributed vote, per process (docs/design/votes-and-heat.md#what-a-vote-costs): the
// distributed topology on a fresh database and stream, seeded through the API, one vote load
// (autocannon, the bench's oracle and tally check), and utime+stime of every service process and
// of the database's PostgreSQL backends divided by the votes. A quick A/B tool beside `npm run bench`.
// Env: BENCH_AGENTS (200), BENCH_POSTS (1000), BENCH_DURATION (10), BENCH_WARMUP (2),
// BENCH_CONNECTIONS (50), VOTE_CPU_RUNS (1: loads measured back to back on one system),
// VOTE_CPU_PROF_DIR (a folder: every process runs with --cpu-prof into it), VOTE_CPU_MODE
// (`distributed`, or `embedded`: the all-in-one on its own data folder, CPU of its node process and
// of the rest of its tree — its PostgreSQL server — per vote), VOTE_CPU_RATE (votes/s of the
// measured load; absent: as fast as answers come — a fixed rate below the peak compares CPU per
// vote of two builds with less noise than a saturated load).
import { cpuProfileEnv, freePort, startSystem } from "./lib/system.mjs";
import { createDistributedInfra } from "./lib/infra.mjs";
import { cleanupAll, cleanupOnSignalsAndCrashes } from "./lib/cleanup.mjs";
import { seedViaApi } from "./lib/api.mjs";
import { LOAD, load } from "./lib/load.mjs";
import { cpuDelta, cpuSample, dbSample, serviceProcesses } from "./lib/mix-probes.mjs";
import pg from "pg";
import { cpuSecondsOf, treeCpuSeconds, treePids, waitQuiet } from "./lib/proctree.mjs";
import { checkTallies, voteOracle } from "./lib/votes.mjs";
import { fileURLToPath } from "node:url";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = process.env;
/** Votes per second of the measured loads (VOTE_CPU_RATE), or undefined: as fast as answered. */
const rate = env.VOTE_CPU_RATE ? Number(env.VOTE_CPU_RATE) : undefined;
const root = fileURLToPath(new URL("../../", import.meta.url));
cleanupOnSignalsAndCrashes();
let code = 0;
try {
  if ((env.VOTE_CPU_MODE ?? "distributed") === "embedded") await embedded();
  else await distributed();
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  await cleanupAll();
}
process.exit(code);

/** Prints one measured load: its rate, p99, answers, and `cpu` (CPU ms per vote by process). */
function printRun(run, r, cpu) {
  const n = r.ok + r.non2xx;
  console.log(JSON.stringify({ run, votesPerSec: r.reqPerSec, p99: r.p99, n, non2xx: r.non2xx, ...cpu }));
}

/** CPU seconds of the node processes (`nodes`) and of the whole tree under `root`. */
function sampleEmbedded(root, nodes) {
  return {
    node: nodes.reduce((s, pid) => s + cpuSecondsOf(pid), 0),
    tree: treeCpuSeconds(root),
    at: performance.now(),
  };
}

/** The embedded mode: the all-in-one's node process and the rest of its tree, CPU ms per vote. */
async function embedded() {
  const dataDir = mkdtempSync(join(tmpdir(), "aps-vote-cpu-"));
  try {
    const sys = await startSystem({
      root,
      mode: "embedded",
      port: await freePort(),
      dataDir,
      env: cpuProfileEnv(env.VOTE_CPU_PROF_DIR),
    });
    const seed = await seedViaApi(sys.base, Number(env.BENCH_AGENTS ?? 200), Number(env.BENCH_POSTS ?? 1000));
    await waitQuiet(sys.pid, { maxMs: 30_000 });
    const oracle = voteOracle(seed.agents, seed.postIds);
    if (LOAD.warmup > 0) await load(sys.origin, oracle.request, { duration: LOAD.warmup, warmup: 0 });
    for (let i = 0; i < Number(env.VOTE_CPU_RUNS ?? 1); i++) {
      const nodes = treePids(sys.pid).filter((pid) =>
        /all-in-one\/dist\/main\.js/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8")),
      );
      // idle CPU over 5 s right before the load, subtracted below (as in the distributed mode)
      const i0 = sampleEmbedded(sys.pid, nodes);
      await new Promise((ok) => setTimeout(ok, 5000));
      const i1 = sampleEmbedded(sys.pid, nodes);
      const a = sampleEmbedded(sys.pid, nodes);
      const prof = env.VOTE_CPU_PROF_DIR && i === 0;
      if (prof) for (const pid of nodes) process.kill(pid, "SIGUSR2");
      const r = await load(sys.origin, oracle.request, { warmup: 0, rate });
      await waitQuiet(sys.pid, { maxMs: 20_000, windowMs: 3000 });
      if (prof) for (const pid of nodes) process.kill(pid, "SIGUSR2");
      const b = sampleEmbedded(sys.pid, nodes);
      const n = r.ok + r.non2xx;
      const idleShare = (b.at - a.at) / (i1.at - i0.at);
      const node = (b.node - a.node - (i1.node - i0.node) * idleShare) * 1000;
      const tree = (b.tree - a.tree - (i1.tree - i0.tree) * idleShare) * 1000;
      printRun(i, r, {
        treeMs: +(tree / n).toFixed(3),
        nodeMs: +(node / n).toFixed(3),
        postgresMs: +((tree - node) / n).toFixed(3),
      });
    }
    await oracle.settle(sys.base);
    const tally = await checkTallies(sys.base, oracle.expected());
    console.log(JSON.stringify({ tally }));
    if (tally.mismatches.length) code = 1;
    await sys.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The distributed mode: every service process and the database's backends, CPU ms per vote. */
async function distributed() {
  const infra = await createDistributedInfra(env.DATABASE_URL, env.NATS_URL);
  const sys = await startSystem({
    root,
    mode: "distributed",
    port: await freePort(),
    infraEnv: infra.env,
    env: cpuProfileEnv(env.VOTE_CPU_PROF_DIR),
  });
  const seed = await seedViaApi(sys.base, Number(env.BENCH_AGENTS ?? 200), Number(env.BENCH_POSTS ?? 1000));
  await waitQuiet(sys.pid, { maxMs: 30_000 });
  const oracle = voteOracle(seed.agents, seed.postIds);
  if (LOAD.warmup > 0) await load(sys.origin, oracle.request, { duration: LOAD.warmup, warmup: 0 });
  const runs = Number(env.VOTE_CPU_RUNS ?? 1);
  for (let i = 0; i < runs; i++) {
    const procs = serviceProcesses(sys.pid, sys.processes);
    // idle CPU of every process over 5 s right before the load: subtracted below, so that a
    // slow run on a loaded machine does not spread the background work over fewer votes
    const i0 = cpuSample(procs, infra.database);
    await new Promise((ok) => setTimeout(ok, 5000));
    const idle = cpuDelta(procs, i0, cpuSample(procs, infra.database));
    const sql = new pg.Client({ connectionString: infra.sqlUrl });
    await sql.connect();
    const da = await dbSample(sql, infra.database);
    const a = cpuSample(procs, infra.database);
    const prof = env.VOTE_CPU_PROF_DIR && i === 0;
    if (prof) for (const p of procs) process.kill(p.pid, "SIGUSR2");
    const r = await load(sys.origin, oracle.request, { warmup: 0, rate });
    // the relay's and consumers' work for these votes: wait until the tree is quiet again
    await waitQuiet(sys.pid, { maxMs: 20_000, windowMs: 3000 });
    const b = cpuSample(procs, infra.database);
    if (prof) for (const p of procs) process.kill(p.pid, "SIGUSR2");
    const n = r.ok + r.non2xx;
    const d = cpuDelta(procs, a, b);
    // pg_stat counters are flushed by backends at most every PGSTAT_MIN_INTERVAL (1 s)
    await new Promise((ok) => setTimeout(ok, 1200));
    const db = await dbSample(sql, infra.database);
    await sql.end();
    const tables = {};
    for (const [name, t] of db.tables) {
      const ins = t.ins - (da.tables.get(name)?.ins ?? 0);
      if (ins > 0) tables[name] = +(ins / n).toFixed(2);
    }
    console.log(
      JSON.stringify({
        run: i,
        commitsPerVote: +((db.commits - da.commits) / n).toFixed(2),
        rowsPerVote: +((db.rows - da.rows) / n).toFixed(2),
        insertsPerVote: tables,
        natsMs: +(d.nats / n).toFixed(3),
      }),
    );
    const per = {};
    for (const [k, v] of Object.entries(d.per)) per[k.split("#")[0]] = (per[k.split("#")[0]] ?? 0) + v;
    per.postgres = d.postgres;
    const idlePer = { postgres: idle.postgres };
    for (const [k, v] of Object.entries(idle.per)) idlePer[k.split("#")[0]] = (idlePer[k.split("#")[0]] ?? 0) + v;
    for (const k of Object.keys(per)) per[k] -= ((idlePer[k] ?? 0) * d.wallMs) / idle.wallMs;
    const total = Object.values(per).reduce((s, v) => s + v, 0);
    const row = Object.fromEntries(Object.entries(per).map(([k, v]) => [k, +(v / n).toFixed(3)]));
    const idleMsPerS = Object.fromEntries(
      Object.entries(idlePer).map(([k, v]) => [k, +((v / idle.wallMs) * 1000).toFixed(1)]),
    );
    console.log(JSON.stringify({ run: i, idleMsPerS }));
    printRun(i, r, { totalMs: +(total / n).toFixed(3), ...row });
  }
  await oracle.settle(sys.base);
  const tally = await checkTallies(sys.base, oracle.expected());
  console.log(JSON.stringify({ tally }));
  if (tally.mismatches.length) code = 1;
  await sys.stop();
}
