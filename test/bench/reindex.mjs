#!/usr/bin/env node
// How fast the search index is rebuilt from the forum (docs/design/search-and-translation.md#comments-in-search):
// the distributed topology on a fresh database and stream with KNOWLEDGE_ENGINE=postgres, N posts
// inserted in SQL (`seedPostsTo`, with comment counts but no comment rows), the knowledge schema
// dropped, the system started again, and the time until every post is a document; with CPU ms per
// 1,000 posts of each process and of the database's PostgreSQL backends (idle CPU included).
// Env: DATABASE_URL, NATS_URL (required), REINDEX_POSTS (50000), REINDEX_PROF_DIR (a folder: every
// process writes a CPU profile of the rebuild into it).
import { cpuProfileEnv, freePort, startSystem } from "./lib/system.mjs";
import { createDistributedInfra } from "./lib/infra.mjs";
import { cleanupAll, cleanupOnSignalsAndCrashes } from "./lib/cleanup.mjs";
import { openSql, seedPostsTo } from "./lib/scale.mjs";
import { cpuDelta, cpuSample, serviceProcesses } from "./lib/mix-probes.mjs";
import { fileURLToPath } from "node:url";
const env = process.env;
const root = fileURLToPath(new URL("../../", import.meta.url));
cleanupOnSignalsAndCrashes();
let code = 1;
const N = Number(env.REINDEX_POSTS ?? 50000);
try {
  const infra = await createDistributedInfra(env.DATABASE_URL, env.NATS_URL);
  const kenv = { ...infra.env, KNOWLEDGE_ENGINE: "postgres" };
  let sys = await startSystem({ root, mode: "distributed", port: await freePort(), infraEnv: kenv });
  await sys.stop();
  const { client: c, close } = await openSql(infra.sqlUrl);
  const s = await seedPostsTo(c, N, [{ agentId: "ag_01JWN82D00JXETPH8GM57FA7S8", name: "seed" }]);
  console.log("seeded", s);
  await c.query("DROP SCHEMA IF EXISTS knowledge CASCADE");
  const t0 = performance.now();
  sys = await startSystem({
    root,
    mode: "distributed",
    port: await freePort(),
    infraEnv: kenv,
    env: cpuProfileEnv(env.REINDEX_PROF_DIR),
  });
  const procs = serviceProcesses(sys.pid, sys.processes);
  if (env.REINDEX_PROF_DIR) for (const p of procs) process.kill(p.pid, "SIGUSR2");
  const a = cpuSample(procs, infra.database);
  let n = 0;
  for (;;) {
    try {
      n = Number((await c.query("SELECT count(*)::int AS n FROM knowledge.documents WHERE id LIKE 'p_%'")).rows[0].n);
    } catch {
      n = 0;
    }
    if (n >= N) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const b = cpuSample(procs, infra.database);
  if (env.REINDEX_PROF_DIR) for (const p of procs) process.kill(p.pid, "SIGUSR2");
  const secs = (performance.now() - t0) / 1000;
  const d = cpuDelta(procs, a, b);
  console.log(
    JSON.stringify({
      posts: N,
      secs: secs.toFixed(1),
      perSec: Math.round(N / secs),
      cpuMsPer1000: Object.fromEntries(
        Object.entries({ ...d.per, postgres: d.postgres }).map(([k, v]) => [
          k.split("#")[0],
          +((v / N) * 1000).toFixed(1),
        ]),
      ),
    }),
  );
  await close();
  await sys.stop();
  code = 0;
} catch (e) {
  console.error(e);
} finally {
  await cleanupAll();
}
process.exit(code);
