#!/usr/bin/env node
// CPU ms per cached read, embedded (docs/performance.md): the all-in-one on an empty data folder,
// seeded through the API, then the bench's two read loads (the hot list, and /posts/{id} over 100
// ids at random) with the whole tree's utime+stime divided by the answers, beside the minimal
// express baseline serving the same bytes; the hot list also with a key (the same bytes). A quick
// A/B tool beside `npm run bench`.
// Env: BENCH_AGENTS (50), BENCH_POSTS (300), BENCH_DURATION (10), BENCH_WARMUP (2),
// BENCH_CONNECTIONS (50), READ_CPU_PROF_DIR (a folder: the all-in-one writes one .cpuprofile per
// load into it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuProfileEnv, freePort, startSystem } from "./lib/system.mjs";
import { cleanupAll, cleanupOnSignalsAndCrashes, onCleanup } from "./lib/cleanup.mjs";
import { seedViaApi } from "./lib/api.mjs";
import { load, randomPathRequest } from "./lib/load.mjs";
import { recordResponses, startBaseline } from "./lib/baselines.mjs";
import { treeCpuSeconds, waitQuiet } from "./lib/proctree.mjs";

const env = process.env;
const root = fileURLToPath(new URL("../../", import.meta.url));
cleanupOnSignalsAndCrashes();
let code = 0;
try {
  const tmp = mkdtempSync(join(tmpdir(), "aps-read-cpu-"));
  onCleanup(`remove ${tmp}`, () => rmSync(tmp, { recursive: true, force: true }));
  const sys = await startSystem({
    root,
    mode: "embedded",
    port: await freePort(),
    dataDir: join(tmp, "data"),
    env: cpuProfileEnv(env.READ_CPU_PROF_DIR),
  });
  const seed = await seedViaApi(sys.base, Number(env.BENCH_AGENTS ?? 50), Number(env.BENCH_POSTS ?? 300));
  await waitQuiet(sys.pid, { maxMs: 30_000 });
  const hot = "/v1/posts?sort=hot&limit=25";
  const postPaths = seed.postIds.slice(0, 100).map((id) => `/v1/posts/${id}`);
  // a keyed reader: its lists come from the same entries (docs/design/edge.md#read-cache-shortcut)
  const keyed = { authorization: `Bearer ${seed.agents[0].apiKey}` };
  for (const [name, paths, request] of [
    ["hot list", [hot], { method: "GET", path: hot }],
    ["hot list, keyed", [hot], { method: "GET", path: hot, headers: keyed }],
    ["one post", postPaths, randomPathRequest(postPaths)],
  ]) {
    const responses = await recordResponses(sys.origin, paths);
    const express = await startBaseline("express", responses, tmp);
    const base = await load(express.origin, request);
    await express.stop();
    await load(sys.origin, request, { duration: 2, warmup: 0 });
    const a = treeCpuSeconds(sys.pid);
    if (env.READ_CPU_PROF_DIR) process.kill(sys.pid, "SIGUSR2");
    const r = await load(sys.origin, request, { warmup: 0 });
    if (env.READ_CPU_PROF_DIR) process.kill(sys.pid, "SIGUSR2");
    const cpuMs = ((treeCpuSeconds(sys.pid) - a) * 1000) / Math.max(1, r.ok + r.non2xx);
    console.log(
      JSON.stringify({
        read: name,
        aps: r.reqPerSec,
        express: base.reqPerSec,
        ratio: +(r.reqPerSec / base.reqPerSec).toFixed(2),
        p99: r.p99,
        non2xx: r.non2xx,
        treeCpuMsPerRead: +cpuMs.toFixed(3),
      }),
    );
  }
  await sys.stop();
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  await cleanupAll();
}
process.exit(code);
