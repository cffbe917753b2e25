// What `npm run bench:mix` samples before and after each load step (docs/design/tests.md#mixed-load-bench):
// CPU ticks of every service process (/proc/<pid>/stat utime + stime), of the PostgreSQL backends
// serving the bench's database and of the NATS server; the database's commits and row changes
// (pg_stat_database), the server's WAL position (pg_current_wal_lsn, cluster-wide), each table's
// inserted rows and size; and each replica's request counter from its /metrics.
import { readdirSync, readFileSync } from "node:fs";
import { treePids } from "./proctree.mjs";

/** Clock ticks per second of /proc/<pid>/stat (100 on Linux x86-64 and arm64). */
const CLK_TCK = 100;

/** utime + stime of `pid` in ticks, or null when it is gone. */
function ticksOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}

/** The command line of `pid` (NULs as spaces), or "" when it is gone. */
function cmdlineOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

/**
 * The service processes of a distributed system under `root` (deploy/local/start.mjs), each named
 * by the `services/<name>/dist/main.js` of its command line and numbered per name in pid order
 * (or by `listed`, start.mjs's `APS processes` line, when it printed one: replica and metrics URL).
 * @param {number} root
 * @param {{ name: string, replica: number, pid: number, metrics?: string | null }[]} listed
 * @returns {{ name: string, replica: number, pid: number, metrics: string | null }[]}
 */
export function serviceProcesses(root, listed) {
  const byPid = new Map(listed.map((p) => [p.pid, p]));
  const seen = new Map();
  const out = [];
  for (const pid of treePids(root)
    .slice(1)
    .sort((a, b) => a - b)) {
    const m = /services\/([a-z-]+)\/dist\/main\.js/.exec(cmdlineOf(pid));
    if (!m) continue;
    const l = byPid.get(pid);
    const replica = l?.replica ?? (seen.get(m[1]) ?? 0) + 1;
    seen.set(m[1], replica);
    out.push({ name: m[1], replica, pid, metrics: l?.metrics ?? null });
  }
  return out;
}

/** Pids of the PostgreSQL backends connected to `database` (their title names it) and of nats-server. */
function serverPids(database) {
  const pg = [];
  const nats = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmd = cmdlineOf(Number(name));
    if (cmd.startsWith("postgres: ") && cmd.includes(` ${database} `)) pg.push(Number(name));
    else if (/(^|\/)nats-server( |$)/.test(cmd)) nats.push(Number(name));
  }
  return { pg, nats };
}

/**
 * A CPU sample: ticks per service process, per PostgreSQL backend of `database`, per nats-server.
 * @param {{ name: string, replica: number, pid: number }[]} procs
 * @param {string} database
 */
export function cpuSample(procs, database) {
  const { pg, nats } = serverPids(database);
  const t = (pids) => new Map(pids.map((p) => [p, ticksOf(p)]).filter(([, x]) => x !== null));
  return {
    at: performance.now(),
    procs: t(procs.map((p) => p.pid)),
    pg: t(pg),
    nats: t(nats),
    self: process.cpuUsage(),
  };
}

/**
 * CPU ms used between two samples: per service process (`name#replica`), PostgreSQL backends of
 * the database (a backend new since `a` counts all its ticks; one gone before `b` is lost — the
 * pools keep theirs open under load), the NATS server (shared with anything else using it:
 * an upper bound) and the bench client itself.
 */
export function cpuDelta(procs, a, b) {
  const ms = (ticks) => (ticks * 1000) / CLK_TCK;
  const per = {};
  for (const p of procs) {
    const x = a.procs.get(p.pid);
    const y = b.procs.get(p.pid);
    if (x !== undefined && y !== undefined) per[`${p.name}#${p.replica}`] = ms(y - x);
  }
  const sum = (ma, mb) => {
    let s = 0;
    for (const [pid, y] of mb) s += y - (ma.get(pid) ?? 0);
    return ms(s);
  };
  return {
    per,
    postgres: sum(a.pg, b.pg),
    nats: sum(a.nats, b.nats),
    client: (b.self.user - a.self.user + b.self.system - a.self.system) / 1000,
    wallMs: b.at - a.at,
  };
}

/**
 * Database counters of `database` on client `c`: commits, rows inserted/updated/deleted, the
 * server's WAL position in bytes (cluster-wide: other databases' writes count too), and per user
 * table its inserted rows, live rows and total size (heap + indexes + TOAST, bytes).
 * @param {import("pg").Client} c
 * @param {string} database
 */
export async function dbSample(c, database) {
  const { rows } = await c.query(
    `SELECT xact_commit::bigint AS commits, (tup_inserted + tup_updated + tup_deleted)::bigint AS rows,
            pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal
       FROM pg_stat_database WHERE datname = $1`,
    [database],
  );
  const t = await c.query(
    `SELECT schemaname || '.' || relname AS name, n_tup_ins::bigint AS ins, n_live_tup::bigint AS live,
            pg_total_relation_size(relid)::bigint AS bytes
       FROM pg_stat_user_tables`,
  );
  return {
    commits: Number(rows[0].commits),
    rows: Number(rows[0].rows),
    wal: Number(rows[0].wal),
    tables: new Map(t.rows.map((r) => [r.name, { ins: Number(r.ins), live: Number(r.live), bytes: Number(r.bytes) }])),
  };
}

/**
 * Requests a process has served so far, from its /metrics: the gateway's aps_http_requests_total,
 * a service's aps_grpc_server_handled_total (summed over labels); null without a metrics URL.
 * @param {string | null} url
 */
export async function requestsServed(url) {
  if (!url) return null;
  try {
    const text = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
    let n = 0;
    for (const m of text.matchAll(/^aps_(?:http_requests_total|grpc_server_handled_total)\{[^}]*\} (\S+)$/gm))
      n += Number(m[1]);
    return n;
  } catch {
    return null;
  }
}
