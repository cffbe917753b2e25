import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createLogger, InProcessBus, openDatabase, openServiceDeps } from "@aps/platform";
import { PostgresEngine } from "@aps/knowledge/store/postgres-engine";
import { forumLimits, loadConfig as forumConfig, startForum, type ForumHandle } from "@aps/forum";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { waitStrictly } from "../support/wait.js";

/**
 * The services behind PgBouncer in transaction mode (docs/design/operations.md#connection-budget-and-pgbouncer): a real
 * `pgbouncer` (Debian's package, installed by `.ci/run`'s apt phase) in transaction mode, with a
 * server pool of 2 for a service pool of 6 — so consecutive transactions of one client land on
 * different server connections — in front of the local PostgreSQL. The real forum runs through
 * it (DATABASE_POOLER=transaction): its migrations go to the server directly
 * (DATABASE_MIGRATION_URL: node-pg-migrate's session-level advisory lock), posts, votes (the group
 * commit's statements) and reads work; knowledge's PostgreSQL engine finds a typo (its trigram
 * threshold set per transaction, not per connection); a PgBouncer database entry without the schema's
 * `connect_query` fails the start with a message naming it. Without pgbouncer on the machine the
 * suite is a LOUD skip naming why (never under APS_TEST_REQUIRE_REAL=1, i.e. CI).
 */
const PGBOUNCER = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p) => existsSync(p));
const pgUp = await hasPostgres();
const skipReason = !PGBOUNCER
  ? "pgbouncer is not installed (apt-get install pgbouncer; .ci/run's apt phase installs it)"
  : !pgUp
    ? "no PostgreSQL"
    : undefined;
if (skipReason) {
  if (process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(`test/scale/pgbouncer.test.ts cannot run: ${skipReason}`);
  console.warn(`\n*** SKIPPING test/scale/pgbouncer.test.ts: ${skipReason} ***\n`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Waits (≤ 10 s, stretched on a loaded machine) until pgbouncer accepts connections on `port`; its exit fails at once. */
async function waitForPort(port: number, proc: ChildProcess, output: () => string): Promise<void> {
  await waitStrictly(
    `pgbouncer to listen on ${port}`,
    async () => {
      if (proc.exitCode !== null) throw new Error(`pgbouncer exited ${proc.exitCode}:\n${output()}`);
      return new Promise<boolean>((resolve) => {
        const c = tcpConnect(port, "127.0.0.1");
        c.once("connect", () => (c.destroy(), resolve(true)));
        c.once("error", () => resolve(false));
      });
    },
    { timeoutMs: 10_000, intervalMs: 100, show: output },
  );
}

(skipReason ? describe.skip : describe)(
  skipReason ? `forum behind PgBouncer (SKIPPED: ${skipReason})` : "forum behind PgBouncer in transaction mode",
  () => {
    let db: TestDatabase;
    let dir: string;
    let bouncer: ChildProcess;
    let out = "";
    let port = 0;
    let forum: ForumHandle | undefined;
    const bouncerUrl = (alias: string) => `postgres://postgres@127.0.0.1:${port}/${alias}`;

    beforeAll(async () => {
      db = await createTestDatabase();
      const server = new URL(ADMIN_DATABASE_URL);
      const dbName = new URL(db.url).pathname.slice(1);
      const user = decodeURIComponent(server.username || "postgres");
      port = await freePort();
      dir = mkdtempSync(join(tmpdir(), "aps-pgbouncer-"));
      chmodSync(dir, 0o755);
      const target = `host=${server.hostname} port=${server.port || 5432} dbname=${dbName} user=${user}`;
      writeFileSync(
        join(dir, "pgbouncer.ini"),
        [
          "[databases]",
          // one entry per service: its schema as the server connections' search_path (docs/design/operations.md#connection-budget-and-pgbouncer)
          `aps_forum = ${target} connect_query='SET search_path TO forum'`,
          `aps_nopath = ${target}`,
          `aps_knowledge = ${target} connect_query='SET search_path TO knowledge'`,
          "[pgbouncer]",
          "listen_addr = 127.0.0.1",
          `listen_port = ${port}`,
          "unix_socket_dir =",
          "auth_type = trust",
          `auth_file = ${join(dir, "userlist.txt")}`,
          "pool_mode = transaction",
          "default_pool_size = 2",
          "max_client_conn = 100",
          "ignore_startup_parameters = extra_float_digits",
          "",
        ].join("\n"),
      );
      writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`);
      // PgBouncer refuses to run as root: as root (CI), it drops to the postgres user
      const asRoot = process.getuid?.() === 0;
      const hasPostgresUser = asRoot && spawnSync("id", ["postgres"]).status === 0;
      bouncer = spawn(PGBOUNCER!, [...(hasPostgresUser ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      bouncer.stdout!.on("data", (d) => (out += String(d)));
      bouncer.stderr!.on("data", (d) => (out += String(d)));
      await waitForPort(port, bouncer, () => out);
    }, 60_000);

    afterAll(async () => {
      await forum?.stop();
      bouncer?.kill("SIGTERM");
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("migrates on the direct URL, and posts, votes and reads through PgBouncer", async () => {
      const log = createLogger("forum", "warn");
      const cfg = forumConfig({
        DATABASE_URL: bouncerUrl("aps_forum"),
        DATABASE_MIGRATION_URL: db.url,
        DATABASE_POOLER: "transaction",
        DATABASE_POOL_MAX: "6",
        FORUM_LISTEN_ADDR: "127.0.0.1:0",
      });
      const deps = await openServiceDeps("forum", cfg, new InProcessBus(log), log);
      forum = await startForum(deps, { listenAddr: cfg.FORUM_LISTEN_ADDR, limits: forumLimits(cfg) });
      const repo = forum.repo;
      const posts = [];
      for (let i = 0; i < 4; i++)
        posts.push(
          await repo.createPost({ agentId: `a_author${i}`, name: `author${i}` }, `Post ${i}`, `Body ${i}`, false),
        );
      // concurrent votes (the group commit's batch statement) and one at a time (the single one), twice each
      await Promise.all(
        posts.flatMap((p) => Array.from({ length: 6 }, (_, v) => repo.castVote(p.id, `a_voter${v}`, 1))),
      );
      for (let round = 0; round < 2; round++)
        for (const p of posts) await repo.castVote(p.id, "a_solo", round === 0 ? 1 : -1);
      const page = await repo.listPosts("all", "new", 10, "");
      expect(page.items.map((p) => p.id).sort()).toEqual(posts.map((p) => p.id).sort());
      for (const p of page.items) expect([p.votes?.for, p.votes?.against]).toEqual([6, 1]);

      // the migrations ran (on the direct URL: node-pg-migrate's session lock) into the forum schema
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const applied = await c.query("SELECT count(*)::int AS n FROM forum.pgmigrations");
        expect(applied.rows[0].n).toBeGreaterThan(0);
        expect((await c.query("SELECT count(*)::int AS n FROM forum.posts")).rows[0]).toEqual({ n: 4 });
      } finally {
        await c.end();
      }
    }, 60_000);

    it("fails the start when the PgBouncer entry does not put the connections in the service's schema", async () => {
      const log = createLogger("forum", "silent");
      const cfg = forumConfig({ DATABASE_URL: bouncerUrl("aps_nopath"), DATABASE_POOLER: "transaction" });
      await expect(openServiceDeps("forum", cfg, new InProcessBus(log), log)).rejects.toThrow(
        /DATABASE_POOLER=transaction.*connect_query='SET search_path TO forum'/,
      );
    }, 30_000);

    it("knowledge's PostgreSQL engine indexes and finds typos through it (trigram threshold per transaction)", async () => {
      const log = createLogger("knowledge", "warn");
      const kdb = await openDatabase({
        url: bouncerUrl("aps_knowledge"),
        schema: "knowledge",
        log,
        poolSize: 4,
        pooler: "transaction",
        migrationUrl: db.url,
      });
      try {
        const engine = new PostgresEngine(kdb, log);
        await engine.init();
        await engine.upsert([
          {
            id: "doc-rate",
            kind: "doc",
            title: "Rate limits",
            body: "Proposals per agent per interval",
            url: "/r",
            tags: ["docs"],
          },
          {
            id: "doc-vote",
            kind: "doc",
            title: "Voting rules",
            body: "Council seats and votes",
            url: "/v",
            tags: ["docs"],
          },
        ]);
        // concurrent searches with different typo thresholds (8 letters: 0.357, 7 letters: 0.308)
        // share 2 server connections
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => engine.search(i % 2 === 0 ? "intreval" : "councel", [], 5)),
        );
        for (const [i, r] of results.entries()) expect(r.hits[0]?.id).toBe(i % 2 === 0 ? "doc-rate" : "doc-vote");
      } finally {
        await kdb.close();
      }
    }, 60_000);
  },
);
