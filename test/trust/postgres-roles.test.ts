import pg from "pg";
import { createLogger, InProcessBus, openServiceDeps, serviceClient } from "@aps/platform";
import { forumLimits, loadConfig as forumConfig, startForum, type ForumHandle } from "@aps/forum";
import { ADMIN_DATABASE_URL, hasPostgres, uniqueSuffix } from "@aps/testkit";
import { forum as forumProto } from "@aps/proto";

/**
 * One PostgreSQL role per service on its own schema (docs/design/services.md#caller-policy-and-internal-trust, docs/
 * reliability.md "Internal trust"), set up on the real PostgreSQL the way the chart's init script
 * does (charts/aps/templates/postgresql.yaml: `CREATE ROLE aps_<service> LOGIN`, `CREATE SCHEMA
 * <service> AUTHORIZATION aps_<service>`, nothing on the database or `public`). The real forum,
 * connected as `aps_forum`, migrates and works in its schema; as that role, reading identity's
 * agents or writing the council's tables is refused. Before, openDatabase and the migrations ran
 * `CREATE SCHEMA IF NOT EXISTS`, which PostgreSQL refuses to a role without CREATE on the database
 * even when the schema exists: a service could only run as a role that may create schemas anywhere.
 */
const real = await hasPostgres();

(real ? describe : describe.skip)(
  real ? "a PostgreSQL role per service" : "a PostgreSQL role per service (SKIPPED: no PostgreSQL at 127.0.0.1:5432)",
  () => {
    const suffix = uniqueSuffix();
    const dbName = `aps_roles_${suffix}`;
    const role = (svc: string) => `aps_${svc}_${suffix}`;
    const url = (user: string) => {
      const u = new URL(ADMIN_DATABASE_URL);
      u.username = user;
      u.password = "";
      u.pathname = `/${dbName}`;
      return u.toString();
    };
    const admin = async (database: string, sql: string[]) => {
      const u = new URL(ADMIN_DATABASE_URL);
      u.pathname = `/${database}`;
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      try {
        for (const q of sql) await c.query(q);
      } finally {
        await c.end();
      }
    };
    let forum: ForumHandle | undefined;

    beforeAll(async () => {
      await admin("postgres", [
        `CREATE DATABASE ${dbName}`,
        ...["forum", "identity"].map((s) => `CREATE ROLE ${role(s)} LOGIN`),
      ]);
      // as the chart's init script: each schema owned by its role; public closed (PostgreSQL 15 default)
      await admin(dbName, [
        "REVOKE ALL ON SCHEMA public FROM PUBLIC",
        `REVOKE CREATE ON DATABASE ${dbName} FROM PUBLIC`,
        ...["forum", "identity"].map((s) => `CREATE SCHEMA ${s} AUTHORIZATION ${role(s)}`),
      ]);
    }, 60_000);

    afterAll(async () => {
      await forum?.stop();
      await admin("postgres", [
        `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`,
        ...["forum", "identity"].map((s) => `DROP ROLE IF EXISTS ${role(s)}`),
      ]);
    });

    it("the forum migrates and works in its own schema as its own role", async () => {
      const log = createLogger("forum", "warn");
      const cfg = forumConfig({ FORUM_DATABASE_URL: url(role("forum")), FORUM_LISTEN_ADDR: "127.0.0.1:0" });
      const deps = await openServiceDeps("forum", cfg, new InProcessBus(log), log);
      forum = await startForum(deps, {
        listenAddr: cfg.FORUM_LISTEN_ADDR,
        limits: forumLimits(cfg),
      });
      const client = serviceClient(forumProto.ForumServiceDefinition, forum.local);
      const page = await client.listPosts({
        kind: "all",
        sort: "new",
        limit: 10,
        cursor: "",
        authorId: "",
      });
      expect(page.items).toEqual([]);
      const c = new pg.Client({ connectionString: url(role("forum")) });
      await c.connect();
      try {
        const tables = await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'forum' ORDER BY 1");
        expect(tables.rows.map((r: { tablename: string }) => r.tablename)).toEqual(
          expect.arrayContaining(["outbox", "pgmigrations", "posts"]),
        );
        expect((await c.query("SELECT count(*)::int AS n FROM forum.posts")).rows[0]).toEqual({ n: 0 });
      } finally {
        await c.end();
      }
    }, 60_000);

    it("as aps_forum, identity's tables are out of reach and no other schema can be created", async () => {
      // identity migrates its own schema as its role
      const log = createLogger("identity", "warn");
      const idDeps = await openServiceDeps(
        "identity",
        { ...forumConfig({}), databaseUrl: url(role("identity")) },
        new InProcessBus(log),
        log,
      );
      await idDeps.db.pool.query("CREATE TABLE IF NOT EXISTS agents_probe (id text)");
      await idDeps.db.close();
      const c = new pg.Client({ connectionString: url(role("forum")) });
      await c.connect();
      try {
        await expect(c.query("SELECT * FROM identity.agents_probe")).rejects.toThrow(/permission denied/);
        await expect(c.query("INSERT INTO identity.agents_probe VALUES ('x')")).rejects.toThrow(/permission denied/);
        await expect(c.query("CREATE SCHEMA council")).rejects.toThrow(/permission denied/);
        await expect(c.query("CREATE TABLE public.t (x int)")).rejects.toThrow(/permission denied/);
      } finally {
        await c.end();
      }
    });
  },
);
