#!/usr/bin/env node
// `npm run bench`: speed and memory of the all-in-one (`npm start` entry) on its embedded
// defaults, or on real PostgreSQL + NATS when DATABASE_URL and NATS_URL are set (the child
// inherits them). Seeds BENCH_POSTS posts (default 1000) through the public API, then measures
// latency percentiles of the hot paths and write throughput, and the process's resident memory.
// Prints one JSON report. Bounded: fixed request counts, loopback only, stops by itself.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const POSTS = Number(process.env.BENCH_POSTS ?? 1000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const dataDir = mkdtempSync(join(tmpdir(), "aps-bench-"));

const t0 = performance.now();
const child = spawn(process.execPath, [join(root, "services/all-in-one/dist/main.js")], {
  env: { ...process.env, APS_DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn", POSTS_PER_DAY: "100000", JOINS_PER_SOURCE_PER_DAY: "100000", COMMENTS_PER_DAY: "100000", RATE_LIMIT_KEYED_PER_MINUTE: "10000000", RATE_LIMIT_ANON_PER_MINUTE: "10000000" },
  stdio: ["ignore", "pipe", "inherit"],
});
const base = await new Promise((resolve, reject) => {
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
    const m = /APS ready at (\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  child.on("exit", (c) => reject(new Error(`exited ${c}`)));
});
const startMs = Math.round(performance.now() - t0);

async function call(method, path, key, body) {
  const headers = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body) headers["content-type"] = "application/json";
  const res = await fetch(base + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return { json: text ? JSON.parse(text) : undefined, bytes: Buffer.byteLength(text) };
}
async function pool(n, concurrency, fn) {
  let i = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (i < n) await fn(i++);
  }));
}
function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
}
async function measure(label, n, concurrency, fn) {
  const lat = [];
  const t = performance.now();
  await pool(n, concurrency, async (i) => {
    const s = performance.now();
    await fn(i);
    lat.push(performance.now() - s);
  });
  const secs = (performance.now() - t) / 1000;
  return { label, requests: n, concurrency, p50Ms: pct(lat, 50), p95Ms: pct(lat, 95), p99Ms: pct(lat, 99), perSecond: Math.round(n / secs) };
}
function rssMiB() {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : null;
}

try {
  const agents = [];
  for (let i = 0; i < 20; i++) agents.push((await call("POST", "/join", undefined, { name: `bench ${i}` })).json);
  const ids = [];
  const seed = await measure("POST /posts (seeding)", POSTS, 4, async (i) => {
    const a = agents[i % agents.length];
    ids.push((await call("POST", "/posts", a.apiKey, { title: `Bench proposal ${i}`, body: `Body ${i} `.repeat(50), is_arch_design: i % 3 !== 0 })).json.id);
  });
  const rssAfterSeed = rssMiB();
  const results = [seed];
  results.push(await measure("POST /posts/{id}/vote", SAMPLES, 8, (i) => call("POST", `/posts/${ids[i % ids.length]}/vote`, agents[i % agents.length].apiKey, { vote: i % 4 === 0 ? -1 : 1 })));
  let hotBytes = 0;
  results.push(await measure("GET /posts?sort=hot&limit=25", SAMPLES, 4, async () => (hotBytes = (await call("GET", "/posts?sort=hot&limit=25")).bytes)));
  results.push(await measure("GET /posts?kind=arch&sort=new&limit=100", SAMPLES, 4, () => call("GET", "/posts?kind=arch&sort=new&limit=100")));
  // deep keyset page: follow 10 cursors, then time the 11th page
  let cursor = null;
  for (let p = 0; p < 10; p++) cursor = (await call("GET", `/posts?sort=hot&limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)).json.nextCursor;
  results.push(await measure("GET /posts?sort=hot (page 11 via cursor)", SAMPLES, 4, () => call("GET", `/posts?sort=hot&limit=25&cursor=${encodeURIComponent(cursor)}`)));
  results.push(await measure("GET /posts/{id}", SAMPLES, 4, (i) => call("GET", `/posts/${ids[(i * 7) % ids.length]}`)));
  results.push(await measure("GET /me", SAMPLES, 4, (i) => call("GET", "/me", agents[i % agents.length].apiKey)));
  console.log(JSON.stringify({
    mode: process.env.DATABASE_URL ? "all-in-one on real PostgreSQL/NATS" : "all-in-one embedded (PGlite, in-process bus)",
    posts: POSTS,
    startToReadyMs: startMs,
    rssMiB: { afterSeed: rssAfterSeed, atEnd: rssMiB() },
    hotPageBytes: hotBytes,
    results,
  }, null, 2));
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
}
