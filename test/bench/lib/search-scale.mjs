// The search section of `npm run bench` (docs/adr/0133): the embedded engine at scale, measured on
// the engine itself in two child processes — one builds the durable index from BENCH_SEARCH_POSTS
// generated posts (search-corpus.mjs), a second one is the restart: it loads the index (time to
// ready) and times searches and duplicate checks. Engine-level: no HTTP, no gRPC, no forum (seeding
// 100,000 posts through the API's daily limits would take hours); the service adds a gRPC hop and,
// per page of results, one GetPosts call for the snippets' texts.
import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
 * Builds the index of `posts` generated posts under `tmp`, restarts on it and measures. Returns
 * `{ posts, queries, build, restart }` (see search-worker.mjs for the fields).
 */
export async function benchSearchScale({ posts, queries, seed, tmp, log }) {
  const dir = join(tmp, "search-index");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    log(`search: indexing ${posts.toLocaleString("en")} generated posts (durable embedded engine)`);
    const build = await worker(["build", dir, String(posts), String(seed)], log);
    log(
      `search: restart on the index (${(build.bytesOnDisk / 2 ** 20).toFixed(0)} MiB on disk), ${queries} queries of each kind`,
    );
    const restart = await worker(["query", dir, String(posts), String(seed), String(queries)], log);
    return { posts, queries, seed, build, restart };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Goals of issue 18 for the search section (embedded engine). */
export const SEARCH_GOALS = { similarP95Ms: 30, readyMs: 2000 };

/** The markdown of the search section. */
export function searchMarkdown(s) {
  if (!s) return "";
  if (s.skipped) return `### Search at scale\n\nSkipped: ${s.skipped}\n`;
  if (s.error) return `### Search at scale\n\nFAILED: ${s.error}\n`;
  const { build: b, restart: r } = s;
  const pass = (ok) => (ok ? "✅" : "❌");
  return [
    `### Search at scale — embedded engine, ${s.posts.toLocaleString("en")} generated posts`,
    "",
    "| Figure | Value | Goal |",
    "|---|---|---|",
    `| index build (bulk; CPU) / snapshot write | ${b.indexSeconds} s (${b.indexCpuSeconds} s CPU) / ${b.snapshotSeconds} s | — |`,
    `| index on disk (snapshot + log) | ${(b.bytesOnDisk / 2 ** 20).toFixed(1)} MiB | — |`,
    `| RSS / heap after build (after GC) | ${b.memory.rssMiB} / ${b.memory.heapMiB} MiB | — |`,
    `| restart: index load (snapshot + ${r.position.applied} logged events; CPU) | ${r.loadMs} ms (${r.loadCpuMs} ms CPU) | ≤ ${SEARCH_GOALS.readyMs} ms ${pass(r.loadMs <= SEARCH_GOALS.readyMs)} |`,
    `| restart: process start → ready (incl. node, imports, ${r.datasetMs} ms of bench dataset) | ${r.processReadyMs} ms | — |`,
    `| search, 3 body words (p50 / p95; CPU p50 / p95) | ${r.search.p50} / ${r.search.p95} ms; ${r.search.cpuP50} / ${r.search.cpuP95} ms (source post in top 10: ${(r.search.foundTop10 * 100).toFixed(0)}%) | — |`,
    `| search, 2 words, one with a typo (p50 / p95; CPU p50 / p95) | ${r.typo.p50} / ${r.typo.p95} ms; ${r.typo.cpuP50} / ${r.typo.cpuP95} ms | — |`,
    `| similar (duplicate check, p50 / p95; CPU p50 / p95) | ${r.similar.p50} / ${r.similar.p95} ms; ${r.similar.cpuP50} / ${r.similar.cpuP95} ms | p95 ≤ ${SEARCH_GOALS.similarP95Ms} ms ${pass(r.similar.p95 <= SEARCH_GOALS.similarP95Ms)} |`,
    `| RSS / heap after the queries (after GC; includes the bench's ${"PEP"} dataset) | ${r.memory.rssMiB} / ${r.memory.heapMiB} MiB | — |`,
    "",
    `${s.queries} queries of each kind, seed ${s.seed}, load average during the queries ${r.loadAvg.join(" / ")}; engine-level (no HTTP/gRPC; docs/adr/0133). ` +
      "CPU columns: the process's own CPU time per query (process.cpuUsage), which a loaded machine inflates less than wall time.",
    "",
  ].join("\n");
}
