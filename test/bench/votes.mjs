#!/usr/bin/env node
// Votes per second on a real PostgreSQL, three ways at the same concurrency, in ONE run
// (docs/design/votes-and-heat.md#the-vote-statement):
//   raw   — the baseline: a bare `INSERT … ON CONFLICT DO UPDATE` loop on a pool of <concurrency>
//           connections (what the database itself can do);
//   repo  — ForumRepository.castVote directly (pool of <pool> connections, the service's default 5);
//   http  — `POST /v1/posts/{id}/vote` through the all-in-one (gateway → forum, JetStream bus).
// Each vote is a random (agent, post, ±1) from a seeded generator; afterwards the tallies of every
// post are checked against an independent count of the `votes` table.
//
// Usage: node test/bench/votes.mjs [--root DIR] [--modes raw,repo,http] [--seconds 10]
//        [--concurrency 50] [--pool 5] [--posts 1000] [--agents 2000]
//   --root: the APS tree whose built dist/ is measured (default: this one), so an older build can
//           be measured beside the current one on the same machine.
// Needs PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres,
// a throwaway database is created and dropped) and, for http, NATS at NATS_URL
// (default nats://127.0.0.1:4222; a unique stream and subject prefix, deleted afterwards).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { seededRandom } from "@aps/testkit";

const { values: args } = parseArgs({
  options: {
    root: { type: "string", default: fileURLToPath(new URL("../../", import.meta.url)) },
    modes: { type: "string", default: "raw,repo,http" },
    seconds: { type: "string", default: "10" },
    concurrency: { type: "string", default: "50" },
    pool: { type: "string", default: "5" },
    posts: { type: "string", default: "1000" },
    agents: { type: "string", default: "2000" },
  },
});
const root = resolve(args.root);
const modes = new Set(args.modes.split(","));
const SECONDS = Number(args.seconds);
const C = Number(args.concurrency);
const POOL = Number(args.pool);
const POSTS = Number(args.posts);
const AGENTS = Number(args.agents);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const suffix = randomBytes(4).toString("hex");

/** Runs `one(worker, draw)` in `C` loops for SECONDS; returns {ops, errors, perSecond, p50, p99}. */
async function load(one) {
  const until = performance.now() + SECONDS * 1000;
  const lat = [];
  let errors = 0;
  let firstError;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: C }, async (_, w) => {
      const draw = seededRandom(1000 + w);
      while (performance.now() < until) {
        const s = performance.now();
        try {
          await one(draw);
          lat.push(performance.now() - s);
        } catch (err) {
          errors++;
          firstError ??= String(err);
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const pct = (p) => Math.round((lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0) * 100) / 100;
  return {
    ops: lat.length,
    errors,
    firstError,
    perSecond: Math.round(lat.length / secs),
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
  };
}

/** CPU time (utime + stime) of process `pid` in ms, 0 once it is gone (Linux /proc). */
function procCpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // fields 14, 15 in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/**
 * Measures the CPU spent during a load, per operation: by the PostgreSQL backends of the bench
 * database (sum over its connections, sampled before and after) and by the node process doing
 * the work (`serverPid`, or this process). CPU per vote is far less sensitive than votes/s to
 * other load on a shared machine.
 */
async function cpuMeter(url, serverPid) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const backends = async () =>
    (
      await c.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
    ).rows.map((r) => r.pid);
  const sample = async () => {
    const pids = await backends();
    return {
      pg: new Map(pids.map((p) => [p, procCpuMs(p)])),
      node: serverPid ? procCpuMs(serverPid) : process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
    };
  };
  const before = await sample();
  return async (ops) => {
    const after = await sample();
    await c.end();
    let pgMs = 0;
    for (const [pid, ms] of after.pg) pgMs += ms - (before.pg.get(pid) ?? 0);
    const per = (ms) => Math.round((ms / Math.max(1, ops)) * 1000) / 1000;
    return { postgres: per(pgMs), node: per(after.node - before.node) };
  };
}

const pick = (draw, n) => Math.floor(draw() * n);
const voteOf = (draw) => (draw() < 0.6 ? 1 : -1);

async function withDatabase(fn) {
  const name = `aps_bench_votes_${suffix}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  try {
    return await fn(u.toString());
  } finally {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  }
}

/** Posts whose tallies differ from a count of the votes table (must be 0). */
async function tallyMismatches(pool, schema) {
  const r = await pool.query(
    `SELECT count(*)::int AS n FROM ${schema}.posts p LEFT JOIN (
       SELECT post_id, count(*) FILTER (WHERE vote = 1) AS f, count(*) FILTER (WHERE vote = -1) AS a FROM ${schema}.votes GROUP BY post_id
     ) v ON v.post_id = p.id
     WHERE p.votes_for <> coalesce(v.f, 0) OR p.votes_against <> coalesce(v.a, 0)`,
  );
  return r.rows[0].n;
}

async function benchRaw(url) {
  const pool = new pg.Pool({ connectionString: url, max: C });
  try {
    await pool.query(
      "CREATE TABLE raw_votes (post_id text NOT NULL, agent_id text NOT NULL, vote smallint NOT NULL, cast_at timestamptz NOT NULL, PRIMARY KEY (post_id, agent_id))",
    );
    const cpu = await cpuMeter(url);
    const res = await load((draw) =>
      pool.query(
        "INSERT INTO raw_votes (post_id, agent_id, vote, cast_at) VALUES ($1, $2, $3, now()) ON CONFLICT (post_id, agent_id) DO UPDATE SET vote = EXCLUDED.vote, cast_at = EXCLUDED.cast_at",
        [`p${pick(draw, POSTS)}`, `a${pick(draw, AGENTS)}`, voteOf(draw)],
      ),
    );
    return { ...res, cpuMsPerOp: await cpu(res.ops) };
  } finally {
    await pool.end();
  }
}

async function benchRepo(url) {
  const platform = await import(pathToFileURL(join(root, "packages/platform/dist/index.js")).href);
  const { ForumRepository } = await import(pathToFileURL(join(root, "services/forum/dist/store/repository.js")).href);
  const log = platform.createLogger("bench", "silent");
  const db = await platform.openDatabase({ url, schema: "forum", poolSize: POOL, log });
  try {
    await platform.migrate(
      db,
      [platform.PLATFORM_MIGRATIONS_DIR, join(root, "services/forum/dist/store/migrations")],
      log,
    );
    const repo = new ForumRepository(db.pool, platform.systemClock, {
      postsPerDay: 1e9,
      commentsPerDay: 1e9,
      agendaMinScore: 3,
      agendaSize: 10,
    });
    const ids = [];
    for (let i = 0; i < POSTS; i++)
      ids.push(
        (await repo.createPost({ agentId: `ag_author${i % 50}`, name: "author" }, `Proposal ${i}`, "body", i % 3 !== 0))
          .id,
      );
    const cpu = await cpuMeter(url);
    const res = await load((draw) => repo.castVote(ids[pick(draw, POSTS)], `ag_${pick(draw, AGENTS)}`, voteOf(draw)));
    return { ...res, cpuMsPerOp: await cpu(res.ops), tallyMismatches: await tallyMismatches(db.pool, "forum") };
  } finally {
    await db.close();
  }
}

function request(agent, base, method, path, key, body) {
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      new URL(base + path),
      {
        method,
        agent,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(data ? { "content-type": "application/json", "content-length": Buffer.byteLength(data) } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode >= 400) fail(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`));
          else ok(text ? JSON.parse(text) : undefined);
        });
      },
    );
    req.on("error", fail);
    req.end(data);
  });
}

async function benchHttp(url) {
  const dataDir = mkdtempSync(join(tmpdir(), "aps-bench-votes-"));
  const stream = `BENCH_VOTES_${suffix}`;
  // BENCH_NODE_ARGS: extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(root, "services/all-in-one/dist/main.js")], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      NATS_URL,
      NATS_STREAM: stream,
      APS_SUBJECT_PREFIX: `benchvotes${suffix}`,
      APS_DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "warn",
      POSTS_PER_DAY: "1000000",
      COMMENTS_PER_DAY: "1000000",
      JOINS_PER_SOURCE_PER_DAY: "1000000",
      RATE_LIMIT_KEYED_PER_MINUTE: "100000000",
      RATE_LIMIT_ANON_PER_MINUTE: "100000000",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: C });
  try {
    const base = await new Promise((ok, fail) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = /APS ready at (\S+)/.exec(out);
        if (m) ok(m[1]);
      });
      child.on("exit", (c) => fail(new Error(`all-in-one exited ${c}`)));
    });
    const httpAgents = Math.min(AGENTS, 500);
    const keys = [];
    for (let i = 0; i < httpAgents; i++)
      keys.push((await request(agent, base, "POST", "/join", undefined, { name: `voter ${i}` })).apiKey);
    const ids = [];
    const httpPosts = Math.min(POSTS, 300);
    for (let i = 0; i < httpPosts; i++)
      ids.push(
        (
          await request(agent, base, "POST", "/posts", keys[i % keys.length], {
            title: `Proposal ${i}`,
            body: "body",
            is_arch_design: i % 3 !== 0,
          })
        ).id,
      );
    // BENCH_SIGNAL_CHILD: SIGUSR2 to the server right before and after the load (a profiling hook
    // loaded with BENCH_NODE_ARGS may reset and dump its counters on it).
    if (process.env.BENCH_SIGNAL_CHILD) child.kill("SIGUSR2");
    const cpu = await cpuMeter(url, child.pid);
    const res = await load((draw) =>
      request(agent, base, "POST", `/posts/${ids[pick(draw, httpPosts)]}/vote`, keys[pick(draw, httpAgents)], {
        vote: voteOf(draw),
      }),
    );
    if (process.env.BENCH_SIGNAL_CHILD) child.kill("SIGUSR2");
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      // How long the outbox relay needs to catch up after the load (events published to JetStream).
      const t = performance.now();
      let backlog = -1;
      while (performance.now() - t < 30_000) {
        backlog = Number(
          (await pool.query("SELECT count(*) AS n FROM forum.outbox WHERE published_at IS NULL")).rows[0].n,
        );
        if (backlog === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // CPU per vote including the relay's work for it (sampled once the outbox is drained)
      const cpuMsPerOp = await cpu(res.ops);
      return {
        ...res,
        cpuMsPerOp,
        agents: httpAgents,
        posts: httpPosts,
        outboxDrainMs: Math.round(performance.now() - t),
        backlogLeft: backlog,
        tallyMismatches: await tallyMismatches(pool, "forum"),
      };
    } finally {
      await pool.end();
    }
  } finally {
    agent.destroy();
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    rmSync(dataDir, { recursive: true, force: true });
    const { connect } = await import("nats");
    const nc = await connect({ servers: NATS_URL }).catch(() => undefined);
    if (nc) {
      await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  }
}

const report = { root, seconds: SECONDS, concurrency: C, repoPool: POOL, posts: POSTS, agents: AGENTS, results: {} };
if (modes.has("raw")) report.results.rawUpsert = await withDatabase(benchRaw);
if (modes.has("repo")) report.results.repository = await withDatabase(benchRepo);
if (modes.has("http")) report.results.http = await withDatabase(benchHttp);
const raw = report.results.rawUpsert?.perSecond;
if (raw)
  for (const k of ["repository", "http"])
    if (report.results[k])
      report.results[k].vsRawUpsert = Math.round((report.results[k].perSecond / raw) * 1000) / 1000;
console.log(JSON.stringify(report, null, 2));
