// Starting and stopping the system under test: the `npm start` entry (all-in-one on its embedded
// defaults) or the distributed topology (`deploy/local/start.mjs`, one process per service), each
// as a child process of the bench, timed from spawn to its "APS ready at" line and to /readyz 200.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanupStarted, onCleanup } from "./cleanup.mjs";
import { SERVICES } from "../../../packages/platform/dist/topology.js";
import { statOf, treePids } from "./proctree.mjs";

/**
 * A TCP port on 127.0.0.1 free when this resolves, with the `n - 1` ports after it free too (the
 * replicas of a deployable take PORT, PORT+1, …; at most 16).
 */
export async function freePort(n = 16) {
  // Below the kernel's ephemeral range (docs/design/services.md#port-reservation): a port in it can be taken at any moment by
  // an outbound connection of this busy host, and replicas take PORT, PORT+1, … (REPLICAS_GATEWAY).
  const low = ephemeralLow();
  for (let tries = 0; tries < 200; tries++) {
    const base = 20_000 + Math.floor(Math.random() * Math.max(1, low - 20_000 - n));
    const ports = Array.from({ length: n }, (_, i) => base + i);
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) return base;
  }
  throw new Error(`no ${n} consecutive free ports found between 20000 and ${low}`);
}

/** The first port of the kernel's ephemeral range (Linux `ip_local_port_range`; 32768 elsewhere). */
function ephemeralLow() {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

/** Whether `port` is free on loopback now. */
function isFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/**
 * Env that makes every node process of a system under test write CPU profiles into `dir` between
 * two SIGUSR2 (`lib/cpu-profile-hook.cjs`; node 20 refuses `--cpu-prof` in NODE_OPTIONS); `{}`
 * without a `dir`.
 * @param {string | undefined} dir
 */
export function cpuProfileEnv(dir) {
  if (!dir) return {};
  return {
    NODE_OPTIONS: `--require ${fileURLToPath(new URL("./cpu-profile-hook.cjs", import.meta.url))}`,
    PROF_DIR: dir,
  };
}

/** Env of a child with every variable that would point it at outside infrastructure removed. */
function isolatedEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (
      k === "DATABASE_URL" ||
      k.endsWith("_DATABASE_URL") ||
      k === "NATS_URL" ||
      k === "PUBLIC_BASE_URL" ||
      k.endsWith("_GRPC_ADDR") ||
      k.endsWith("_LISTEN_ADDR")
    )
      delete env[k];
  }
  return env;
}

/** Limits raised so that the load measures speed, not the per-day and per-minute quotas. */
const UNLIMITED = {
  POSTS_PER_DAY: "1000000",
  COMMENTS_PER_DAY: "1000000",
  JOINS_PER_SOURCE_PER_DAY: "1000000",
  RATE_LIMIT_KEYED_PER_MINUTE: "100000000",
  RATE_LIMIT_ANON_PER_MINUTE: "100000000",
};

/**
 * A running system under test.
 * @typedef {object} RunningSystem
 * @property {number} pid top process (the tree under it is the system)
 * @property {string} base `http://127.0.0.1:<port>/v1`
 * @property {string} origin `http://127.0.0.1:<port>`
 * @property {number} port gateway port
 * @property {number} lineMs spawn → "APS ready at" printed (ms)
 * @property {number} readyzMs spawn → first `GET /readyz` 200 (ms)
 * @property {() => Promise<void>} stop SIGTERM, wait (≤ 30 s), then SIGKILL whatever of the tree is left
 * @property {{ name: string, replica: number, pid: number, port: number, metrics: string | null }[]} processes
 *   distributed mode: every service process as deploy/local/start.mjs names it on its
 *   `APS processes: […]` line (docs/design/operations.md#local-replicas); [] in embedded mode
 */

/**
 * The node flags `npm start` gives the all-in-one (package.json `scripts.start`: `node <flags>
 * services/all-in-one/dist/main.js`), so the embedded mode runs what a newcomer runs
 * (docs/design/services.md#the-all-in-ones-memory). Throws when the script no longer starts it.
 * @param {string} root the repository
 * @returns {string[]}
 */
export function startScriptNodeFlags(root) {
  const start = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start;
  const m = /\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+services\/all-in-one\/dist\/main\.js/.exec(start);
  if (!m) throw new Error(`package.json's start script does not run services/all-in-one/dist/main.js: ${start}`);
  return m[1].split(/\s+/).filter(Boolean);
}

/**
 * Spawns the system and resolves once it printed "APS ready at" AND /readyz answered 200.
 * @param {{ root: string, mode: "embedded" | "distributed", port: number, dataDir?: string, infraEnv?: Record<string,string>, env?: Record<string,string> }} o
 *   `dataDir`: APS_DATA_DIR (embedded); `infraEnv`: DATABASE_URL, NATS_URL, NATS_STREAM,
 *   APS_SUBJECT_PREFIX (distributed); `env`: more variables in either mode (NODE_OPTIONS of a
 *   profile hook).
 * @returns {Promise<RunningSystem>} rejects when the process exits or is not ready within
 *   BENCH_READY_TIMEOUT_MS (default 120 s); the process tree is stopped then.
 */
export async function startSystem(o) {
  if (cleanupStarted()) throw new Error("interrupted");
  const env = { ...isolatedEnv(), ...UNLIMITED, LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: String(o.port) };
  let script;
  let flags = [];
  if (o.mode === "embedded") {
    script = join(o.root, "services/all-in-one/dist/main.js");
    flags = startScriptNodeFlags(o.root);
    env.APS_DATA_DIR = o.dataDir;
    Object.assign(env, o.env);
  } else {
    script = join(o.root, "deploy/local/start.mjs");
    // every service of the one list on a free port
    Object.assign(
      env,
      o.infraEnv,
      o.env,
      Object.fromEntries(SERVICES.map((svc) => [`${svc.name.toUpperCase()}_PORT`, "0"])),
    );
  }
  const origin = `http://127.0.0.1:${o.port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, [...flags, script], { cwd: o.root, env, stdio: ["ignore", "pipe", "pipe"] });
  const tail = [];
  const keep = (d) => {
    for (const line of String(d).split("\n")) if (line) tail.push(line.slice(0, 400));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  let known = [];
  const stop = onCleanup(`stop ${o.mode} system (pid ${child.pid})`, () => stopTree(child, known));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  // Refresh the tree snapshot while it runs, so that an orphan left by a crash is still known.
  const snap = setInterval(() => (known = snapshot(child.pid, known)), 2000);
  exited.then(() => clearInterval(snap));
  let processes = [];
  try {
    const line = new Promise((resolve) => {
      let out = "";
      child.stdout.on("data", (d) => {
        keep(d);
        if (out === null) return;
        out += d;
        const listed = /^APS processes: (.*)$/m.exec(out);
        if (listed && processes.length === 0) processes = JSON.parse(listed[1]);
        if (/APS ready at \S+/.test(out)) {
          out = null;
          resolve(performance.now() - t0);
        }
      });
      child.stderr.on("data", keep);
    });
    const readyz = (async () => {
      const deadline = Date.now() + Number(process.env.BENCH_READY_TIMEOUT_MS ?? 120_000);
      while (Date.now() < deadline && child.exitCode === null) {
        try {
          const r = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2000) });
          await r.arrayBuffer();
          if (r.status === 200) return performance.now() - t0;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("not ready in time (BENCH_READY_TIMEOUT_MS)");
    })();
    const failed = exited.then((c) => Promise.reject(new Error(`exited (${c}) before ready`)));
    const [lineMs, readyzMs] = await Promise.race([Promise.all([line, readyz]), failed]);
    known = snapshot(child.pid, known);
    return {
      pid: child.pid,
      base: `${origin}/v1`,
      origin,
      port: o.port,
      lineMs: Math.round(lineMs),
      readyzMs: Math.round(readyzMs),
      stop,
      processes,
    };
  } catch (err) {
    await stop();
    throw new Error(`${o.mode} system: ${err.message}\n--- last output ---\n${tail.join("\n")}`, { cause: err });
  }
}

/** `known` plus every living descendant of `pid`, each with its start time (tells a reused pid apart). */
function snapshot(pid, known) {
  const byPid = new Map(known.map((k) => [k.pid, k]));
  for (const p of treePids(pid)) {
    const st = statOf(p);
    if (st && !byPid.has(p)) byPid.set(p, { pid: p, start: st.start });
  }
  return [...byPid.values()].filter((k) => statOf(k.pid)?.start === k.start);
}

/** SIGTERM to the top process, wait ≤ 30 s for it, ≤ 5 s for its tree, then SIGKILL the rest. */
async function stopTree(child, known) {
  const tree = snapshot(child.pid, known);
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await gone;
    clearTimeout(t);
  }
  const alive = () => tree.filter((k) => statOf(k.pid)?.start === k.start);
  for (let i = 0; i < 50 && alive().length; i++) await new Promise((r) => setTimeout(r, 100));
  for (const k of alive()) {
    try {
      process.kill(k.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
