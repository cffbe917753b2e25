import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { reachable } from "./infra.js";
import { waitUntil } from "./wait.js";

const run = promisify(execFile);

/**
 * Private infrastructure for fault-injection tests (test/faults): a NATS JetStream server and a
 * PostgreSQL 15 cluster of the test's own, on free loopback ports and temporary folders, that a
 * test may stop, restart or kill without touching the machine's shared servers (other test files
 * use those). Binaries: `NATS_SERVER_BIN` (default /usr/sbin/nats-server) and `PG_BIN_DIR`
 * (default /usr/lib/postgresql/15/bin); PostgreSQL runs as the `postgres` OS user through
 * `runuser` when the tests run as root.
 */
export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";
export const PG_BIN_DIR = process.env.PG_BIN_DIR ?? "/usr/lib/postgresql/15/bin";

/**
 * A free TCP port on 127.0.0.1, picked at random below the kernel's ephemeral range
 * (`/proc/sys/net/ipv4/ip_local_port_range`, 32768 by default) and checked by binding it.
 *
 * Below that range the kernel never hands the port to another socket on its own: a fault test
 * that stops a private server and starts it again on the same port (a restart, an outage) would
 * otherwise find the port taken by some other process's outgoing connection or `listen(0)` in
 * the gap, and the restart would fail with "Address already in use". Falls back to a port the OS
 * picks when 50 random tries are all taken.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  const span = Math.min(12_000, low - 10_000);
  for (let i = 0; span > 0 && i < 50; i++) {
    const port = low - 1 - Math.floor(Math.random() * span);
    if (handedOut(port)) continue;
    handOut(port); // before the probe: concurrent calls (Promise.all over a topology) never share one
    if (await canListen(port)) return port;
    recent.delete(port);
  }
  return handOut(await listenOn(0));
}

/**
 * Ports this process handed out in the last PORT_HOLD_MS, with when. A port is free again once
 * `freePort` closes its probe, so two calls of one test (a topology's gRPC ports, then its metrics
 * ports) could otherwise draw the same port before either child binds it: the second child then
 * fails with EADDRINUSE. Bounded: entries older than the hold are dropped on each hand-out.
 */
const recent = new Map<number, number>();
/** How long a handed-out port is not handed out again by this process, ms (a system's start-up is well within it). */
const PORT_HOLD_MS = 10 * 60_000;

function handedOut(port: number): boolean {
  const at = recent.get(port);
  return at !== undefined && Date.now() - at < PORT_HOLD_MS;
}

function handOut(port: number): number {
  const now = Date.now();
  for (const [p, at] of recent) if (now - at >= PORT_HOLD_MS) recent.delete(p);
  recent.set(port, now);
  return port;
}

/** The first port of the kernel's ephemeral range (32768 when it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_024 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Whether 127.0.0.1:`port` can be listened on right now. */
async function canListen(port: number): Promise<boolean> {
  return listenOn(port).then(
    () => true,
    () => false,
  );
}

/** Listens on 127.0.0.1:`port` (0: the OS picks), closes, and resolves the port that was bound. */
function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(port, "127.0.0.1", () => {
      const bound = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(bound));
    });
  });
}

/**
 * Resolves once `url`'s port accepts TCP connections (looking every 100 ms), or rejects after
 * `ms` (default 20 000, × TEST_TIME_SCALE).
 */
export async function waitReachable(url: string, ms = 20_000): Promise<void> {
  await waitUntil(`${url} to be reachable`, () => reachable(url, 500), { timeoutMs: ms, intervalMs: 100 });
}

/** Resolves once nothing listens on `url`'s port any more (looking every 100 ms; rejects after `ms` × TEST_TIME_SCALE). */
async function waitUnreachable(url: string, ms = 20_000): Promise<void> {
  await waitUntil(`${url} to be unreachable`, async () => !(await reachable(url, 500)), {
    timeoutMs: ms,
    intervalMs: 100,
  });
}

/** A server a fault test controls: stop it, start it again on the same port and data, remove it. */
export interface PrivateServer {
  /** Connection URL (`nats://127.0.0.1:<port>` or `postgres://postgres@127.0.0.1:<port>/postgres`). */
  url: string;
  port: number;
  /** Stops the server (graceful by default; `kill` = SIGKILL / immediate shutdown) and waits until the port is closed. */
  stop(kill?: boolean): Promise<void>;
  /** Starts it again on the same port and data folder; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  remove(): Promise<void>;
}

/** True when a private NATS can be started here (the binary exists). Says so loudly when not; throws under APS_TEST_REQUIRE_REAL=1. */
export function canRunPrivateNats(): boolean {
  const ok = existsSync(NATS_SERVER_BIN);
  if (!ok && process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(`APS_TEST_REQUIRE_REAL=1 but no nats-server at ${NATS_SERVER_BIN}`);
  if (!ok)
    console.warn(
      `[testkit] NO nats-server at ${NATS_SERVER_BIN} (set NATS_SERVER_BIN): private-NATS fault tests are SKIPPED`,
    );
  return ok;
}

/**
 * Starts `nats-server -a 127.0.0.1 -p <free port> -js -sd <tmp dir>`. A graceful `stop()`
 * (SIGTERM) lets the server flush its JetStream files, as a rolling restart would. `opts.config`:
 * text of a nats-server config file (e.g. an `authorization` block, docs/design/services.md#caller-policy-and-internal-trust) written to the
 * data folder and passed with `-c`; the command-line flags win over it.
 */
export async function startPrivateNats(opts: { config?: string } = {}): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "aps-nats-"));
  const url = `nats://127.0.0.1:${port}`;
  const probe = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let output = "";
  const configArgs: string[] = [];
  if (opts.config !== undefined) {
    const file = join(dir, "nats.conf");
    writeFileSync(file, opts.config);
    configArgs.push("-c", file);
  }
  const start = async () => {
    child = spawn(NATS_SERVER_BIN, [...configArgs, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    try {
      await waitReachable(probe);
    } catch (err) {
      throw new Error(`${String(err)}\n${output}`, { cause: err });
    }
  };
  const stop = async (kill = false) => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill(kill ? "SIGKILL" : "SIGTERM");
    await exited;
    await waitUnreachable(probe);
  };
  await start();
  return {
    url,
    port,
    stop,
    start,
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const asPostgres = (cmd: string, args: string[]) =>
  process.getuid?.() === 0 ? run("runuser", ["-u", "postgres", "--", cmd, ...args]) : run(cmd, args);

/** True when a private PostgreSQL can be started here (binaries present; root or the postgres user); loud when not, throws under APS_TEST_REQUIRE_REAL=1. */
export function canRunPrivatePostgres(): boolean {
  const bins = existsSync(join(PG_BIN_DIR, "initdb")) && existsSync(join(PG_BIN_DIR, "pg_ctl"));
  const user = process.getuid?.() === 0 || process.env.USER === "postgres";
  if ((!bins || !user) && process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(
      `APS_TEST_REQUIRE_REAL=1 but no private PostgreSQL can start (binaries in ${PG_BIN_DIR}: ${bins}; root or postgres user: ${user})`,
    );
  if (!bins || !user)
    console.warn(
      `[testkit] CANNOT START A PRIVATE POSTGRESQL (binaries in ${PG_BIN_DIR}: ${bins}; root or postgres user: ${user}): private-PostgreSQL fault tests are SKIPPED`,
    );
  return bins && user;
}

/**
 * Creates a PostgreSQL 15 cluster in a temporary folder owned by `postgres` (`initdb -A trust`)
 * and starts it with `pg_ctl` on a free port (`-k <tmp socket dir>`, listening on 127.0.0.1;
 * fsync off: a test cluster). `stop()` is a fast shutdown (clients are disconnected, as in a
 * restart); `stop(true)` an immediate one (crash-like, recovery on the next start).
 */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const root = mkdtempSync(join(tmpdir(), "aps-pg-"));
  const data = join(root, "data");
  const sock = root;
  if (process.getuid?.() === 0) {
    const pw = await run("id", ["-u", "postgres"]);
    const gid = await run("id", ["-g", "postgres"]);
    chownSync(root, Number(pw.stdout.trim()), Number(gid.stdout.trim()));
  }
  await asPostgres(join(PG_BIN_DIR, "initdb"), [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const probe = `http://127.0.0.1:${port}`;
  const opts = `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const start = async () => {
    await asPostgres(join(PG_BIN_DIR, "pg_ctl"), [
      "-D",
      data,
      "-o",
      opts,
      "-l",
      join(root, "log"),
      "-w",
      "-t",
      "60",
      "start",
    ]).catch((err: Error) => {
      // pg_ctl says only "Examine the log output": put the log's last lines in the error.
      const log = existsSync(join(root, "log")) ? readFileSync(join(root, "log"), "utf8") : "";
      throw new Error(
        `${err.message}\n--- last lines of the PostgreSQL log ---\n${log.split("\n").slice(-15).join("\n")}`,
      );
    });
    await waitReachable(probe);
  };
  let running = false;
  const stop = async (kill = false) => {
    if (!running) return;
    running = false;
    await asPostgres(join(PG_BIN_DIR, "pg_ctl"), ["-D", data, "-m", kill ? "immediate" : "fast", "-w", "stop"]);
    await waitUnreachable(probe);
  };
  await start();
  running = true;
  return {
    url,
    port,
    stop,
    start: async () => {
      await start();
      running = true;
    },
    remove: async () => {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
