// The search section of `npm run bench` (docs/design/search-and-translation.md): the all-in-one's engine at scale —
// PostgresEngine in the embedded PostgreSQL `npm start` runs —, measured on the engine itself in two
// child processes: one builds the index from BENCH_SEARCH_POSTS generated posts (search-corpus.mjs);
// then the PostgreSQL server is restarted (its caches go with it) and a second process is the
// restart: it opens the index (time to ready) and times searches and duplicate checks. Engine-level:
// no HTTP, no gRPC, no forum (seeding 100,000 posts through the API's daily limits would take
// hours); the service adds a gRPC hop (in-process in the all-in-one).
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmbeddedPostgres } from "@aps/all-in-one";
import { createLogger } from "@aps/platform";

const WORKER = fileURLToPath(new URL("./search-worker.mjs", import.meta.url));

/** Runs one worker command; resolves its JSON result, rejects on a non-zero exit. */
function worker(args, log) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ["--expose-gc", "--max-old-space-size=12000", WORKER, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => log(String(d).trimEnd()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`search bench worker ${args[0]} exited ${code}`));
      resolve({ ...JSON.parse(out.trim().split("\n").at(-1)), wallMs: Math.round(performance.now() - t0) });
    });
  });
}

/**
 * Builds the index of `posts` generated posts in an embedded PostgreSQL under `tmp`, restarts the
 * server and the engine on it and measures. Returns `{ posts, queries, build, restart, pgStartMs }`
 * (see search-worker.mjs for the fields; `pgStartMs`: the server's own restart, not the index's).
 */
export async function benchSearchScale({ posts, queries, seed, tmp, log }) {
  const dataDir = join(tmp, "search-pg");
  rmSync(dataDir, { recursive: true, force: true });
  const pgLog = createLogger("search-bench-postgres", "warn");
  const start = () => startEmbeddedPostgres({ dataDir, port: 0, log: pgLog });
  let server = await start();
  try {
    log(`search: indexing ${posts.toLocaleString("en")} generated posts (PostgresEngine, embedded PostgreSQL)`);
    const build = await worker(["build", server.url, String(posts), String(seed)], log);
    await server.stop();
    const t0 = performance.now();
    server = await start();
    const pgStartMs = Math.round(performance.now() - t0);
    log(
      `search: restart on the index (${(build.bytesOnDisk / 2 ** 20).toFixed(0)} MiB in PostgreSQL), ${queries} queries of each kind`,
    );
    const restart = await worker(["query", server.url, String(posts), String(seed), String(queries)], log);
    return { posts, queries, seed, build, restart, pgStartMs };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Goals of the search section (embedded engine). */
export const SEARCH_GOALS = { similarP95Ms: 30, readyMs: 2000 };

/** The markdown of the search section. */
export function searchMarkdown(s) {
  if (!s) return "";
  if (s.skipped) return `### Search at scale\n\nSkipped: ${s.skipped}\n`;
  if (s.error) return `### Search at scale\n\nFAILED: ${s.error}\n`;
  const { build: b, restart: r } = s;
  const pass = (ok) => (ok ? "✅" : "❌");
  return [
    `### Search at scale — the all-in-one's engine (PostgreSQL full-text index, embedded PostgreSQL), ${s.posts.toLocaleString("en")} generated posts`,
    "",
    "| Figure | Value | Goal |",
    "|---|---|---|",
    `| index build (bulk; CPU of the node process) / mark complete + VACUUM ANALYZE | ${b.indexSeconds} s (${b.indexCpuSeconds} s CPU) / ${b.snapshotSeconds} s | — |`,
    `| index on disk (tables, TOAST and indexes of the knowledge schema) | ${(b.bytesOnDisk / 2 ** 20).toFixed(1)} MiB | — |`,
    `| RSS / heap after build (after GC) | ${b.memory.rssMiB} / ${b.memory.heapMiB} MiB | — |`,
    `| restart: index ready (migrations checked, state read; ${r.position.applied} events applied before; CPU) | ${r.loadMs} ms (${r.loadCpuMs} ms CPU) | ≤ ${SEARCH_GOALS.readyMs} ms ${pass(r.loadMs <= SEARCH_GOALS.readyMs)} |`,
    `| restart: process start → ready (incl. node, imports, ${r.datasetMs} ms of bench dataset) | ${r.processReadyMs} ms | — |`,
    `| the embedded PostgreSQL server's own restart (not the index's) | ${s.pgStartMs} ms | — |`,
    `| search, 3 body words (p50 / p95; CPU p50 / p95) | ${r.search.p50} / ${r.search.p95} ms; ${r.search.cpuP50} / ${r.search.cpuP95} ms (source post in top 10: ${(r.search.foundTop10 * 100).toFixed(0)}%) | — |`,
    `| search, 2 words, one with a typo (p50 / p95; CPU p50 / p95) | ${r.typo.p50} / ${r.typo.p95} ms; ${r.typo.cpuP50} / ${r.typo.cpuP95} ms | — |`,
    `| similar (duplicate check, p50 / p95; CPU p50 / p95) | ${r.similar.p50} / ${r.similar.p95} ms; ${r.similar.cpuP50} / ${r.similar.cpuP95} ms (the post itself in the top 5: ${(r.similar.foundTop5 * 100).toFixed(0)}%) | p95 ≤ ${SEARCH_GOALS.similarP95Ms} ms ${pass(r.similar.p95 <= SEARCH_GOALS.similarP95Ms)} |`,
    `| RSS / heap of the node process after the queries (after GC; includes the bench's ${"PEP"} dataset) | ${r.memory.rssMiB} / ${r.memory.heapMiB} MiB | — |`,
    "",
    `${s.queries} queries of each kind, seed ${s.seed}, load average during the queries ${r.loadAvg.join(" / ")}; engine-level (no HTTP/gRPC; docs/design/search-and-translation.md#duplicate-check). ` +
      "CPU columns: the node process's own CPU time per query (process.cpuUsage) — PostgreSQL's work is in the wall time only.",
    "",
  ].join("\n");
}
