import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { status as GrpcStatus } from "@grpc/grpc-js";
import pg from "pg";
import {
  ApsError,
  createLogger,
  InProcessBus,
  migrateSchema,
  openDatabase,
  openServiceDeps,
  PLATFORM_MIGRATIONS_DIR,
  serviceClient,
} from "@aps/platform";
import { loadConfig as identityConfig, startIdentity } from "@aps/identity";
import { ADMIN_DATABASE_URL, uniqueSuffix } from "@aps/testkit";
import { chartTools, postgresMissing, PROD_VALUES, renderChart, ROOT, type Tools } from "../ops/chart-tools.js";
import { identity as identityProto } from "@aps/proto";

/**
 * `aps chart-secret` (docs/operations/secrets.md): the Secret it prints holds every key the chart,
 * rendered with production values, `secrets.existingSecret` and internal trust on, refers to
 * without `optional` — so no pod waits on a missing key and internal trust is never silently off.
 * Its SQL, run on the real PostgreSQL, gives each schema owner a role whose `search_path` is its
 * schema: a service behind a transaction pooler (no startup options) lands in its schema, the
 * check that refused the old single-URL recipe passes, and the role migrates its schema. Its
 * tokens and digests work on real gRPC: identity accepts the gateway's token and refuses another.
 * The roles get a per-run prefix (`--role-prefix`): roles are server-wide, and tests share the server.
 */
const run = promisify(execFile);
const tools = await chartTools();
const missing = await postgresMissing(tools, "the chart-secret test");

const CLI = join(ROOT, "services/cli/dist/main.js");
const log = createLogger("chart-secret-test", "silent");

(missing ? describe.skip : describe)(
  missing ? `aps chart-secret (SKIPPED: ${missing})` : "aps chart-secret: a complete Secret for existingSecret",
  () => {
    const suffix = uniqueSuffix();
    const dbName = `aps_secret_${suffix}`;
    const prefix = `aps_${suffix}_`;
    let data: Record<string, string>;
    let sql: string;
    const admin = async (text: string, database = "postgres") => {
      const u = new URL(ADMIN_DATABASE_URL);
      u.pathname = `/${database}`;
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    };

    /**
     * `aps chart-secret --database <the test server>/<database> --role-prefix <rolePrefix> …more`:
     * the printed Secret's kind and keys, and the SQL it wrote to stderr.
     */
    const chartSecretOn = async (database: string, rolePrefix: string, more: string[] = []) => {
      const u = new URL(ADMIN_DATABASE_URL);
      const out = await run(process.execPath, [
        CLI,
        "chart-secret",
        "--database",
        `${u.hostname}:${u.port || 5432}/${database}`,
        "--role-prefix",
        rolePrefix,
        ...more,
      ]);
      const YAML = (tools as Tools).requireTool("yaml");
      const secret = YAML.parse(out.stdout) as { kind: string; stringData: Record<string, string> };
      return { kind: secret.kind, data: secret.stringData, sql: out.stderr };
    };

    beforeAll(async () => {
      await admin(`CREATE DATABASE ${dbName}`);
      const out = await chartSecretOn(dbName, prefix, [
        "--nats-users",
        "--nats-url",
        "nats://nats-0.nats:4222,nats://nats-1.nats:4222",
        "--meilisearch-url",
        "http://meilisearch:7700",
      ]);
      expect(out.kind).toBe("Secret");
      data = out.data;
      sql = out.sql;
    }, 60_000);

    afterAll(async () => {
      await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      for (const owner of ["gateway", "identity", "forum", "council", "notifications", "translation"])
        await admin(`DROP ROLE IF EXISTS ${prefix}${owner}`).catch(() => undefined);
    });

    it("--sandbox: the sandbox's NATS user, and a role owning a database of its own that its URL reaches (docs/design/agents.md#sandbox)", async () => {
      const out = await chartSecretOn(dbName, prefix, ["--nats-users", "--sandbox"]);
      const s = out.data;
      expect(s.NATS_USER_SANDBOX).toBe("sandbox");
      expect(s.NATS_PASSWORD_SANDBOX).toMatch(/^[0-9a-f]{64}$/);
      const url = new URL(s.SANDBOX_DATABASE_URL!);
      expect([url.username, url.pathname]).toEqual([`${prefix}sandbox`, `/${dbName}_sandbox`]);
      // its SQL, as the server's admin: the sandbox's statements only (the others ran in beforeAll's run)
      const own = out.sql.split("\n").filter((l) => /sandbox/.test(l) && !l.startsWith("--"));
      expect(own).toHaveLength(2);
      for (const statement of own) await admin(statement);
      try {
        const c = new pg.Client({ connectionString: url.toString() });
        await c.connect();
        try {
          await c.query("CREATE TABLE t (x int)"); // its own database: it may create what it needs
        } finally {
          await c.end();
        }
      } finally {
        await admin(`DROP DATABASE IF EXISTS ${dbName}_sandbox WITH (FORCE)`).catch(() => undefined);
        await admin(`DROP ROLE IF EXISTS ${prefix}sandbox`).catch(() => undefined);
      }
    }, 60_000);

    it("holds every Secret key the production render requires (existingSecret, internal trust on)", async () => {
      const ms = await renderChart(tools as Tools, [
        "-f",
        PROD_VALUES,
        "--set",
        "internalTrust.enabled=true",
        "--set",
        "secrets.existingSecret=aps-secrets",
        "--is-upgrade",
      ]);
      const required = new Set<string>();
      for (const m of ms.filter((x) => x.kind === "Deployment" || x.kind === "Job"))
        for (const c of m.spec.template.spec.containers as Array<{ env?: Array<{ valueFrom?: any }> }>)
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef;
            if (ref && ref.name === "aps-secrets" && ref.optional !== true) required.add(ref.key as string);
          }
      // internal trust's keys are required now: before, they were optional and trust silently off
      expect([...required]).toEqual(expect.arrayContaining(["APS_INTERNAL_TOKEN_GATEWAY", "APS_PEER_DIGESTS_FORUM"]));
      expect([...required].filter((k) => !(k in data))).toEqual([]);
    }, 120_000);

    it("reads an existing Secret's keys under other names where secrets.existingSecretKeys maps them", async () => {
      const ms = await renderChart(tools as Tools, [
        "-f",
        PROD_VALUES,
        "--set",
        "secrets.existingSecretKeys.NATS_URL=nats-servers",
        "--set",
        "secrets.existingSecretKeys.APS_INTERNAL_TOKEN_FORUM=forum-token",
      ]);
      const refs = ms
        .filter((m) => m.kind === "Deployment")
        .flatMap((m) => m.spec.template.spec.containers[0].env as Array<{ name: string; valueFrom?: any }>)
        .filter((e) => e.valueFrom?.secretKeyRef?.name === "aps-secrets")
        .map((e) => `${e.name}←${e.valueFrom.secretKeyRef.key as string}`);
      expect(refs).toContain("NATS_URL←nats-servers");
      expect(refs).toContain("APS_INTERNAL_TOKEN←forum-token");
      expect(refs.filter((r) => r.startsWith("NATS_URL←") && r !== "NATS_URL←nats-servers")).toEqual([]);
      // a key not in the map keeps its name
      expect(refs).toContain("APS_INTERNAL_TOKEN←APS_INTERNAL_TOKEN_GATEWAY");
    }, 120_000);

    it("its SQL gives each schema owner a role whose search_path is its schema: a pooled connection lands there and migrates", async () => {
      await admin(sql, dbName);
      const url = data.FORUM_DATABASE_URL!;
      expect(url).toContain(`${prefix}forum:`);
      // DATABASE_POOLER=transaction: no startup options, so only the role's setting puts it in its schema
      const db = await openDatabase({ url, schema: "forum", log, pooler: "transaction", poolSize: 1 });
      try {
        const r = await db.pool.query<{ s: string }>("SELECT current_schema() AS s");
        expect(r.rows[0]!.s).toBe("forum");
      } finally {
        await db.close();
      }
      await migrateSchema(
        "forum",
        { ...identityConfig({}), DATABASE_URL: url, DATABASE_POOLER: "transaction" },
        log,
        [PLATFORM_MIGRATIONS_DIR, join(ROOT, "services/forum/dist/store/migrations")],
        join(ROOT, "services/forum/dist/store/functions"),
      );
      // and another owner's schema is out of its reach
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await expect(c.query("CREATE TABLE identity.intruder (x int)")).rejects.toThrow(/permission denied/);
      } finally {
        await c.end();
      }
    }, 120_000);

    it("--search-engine postgres: knowledge gets a role and URLs, and its SQL creates pg_trgm so that role migrates the search index", async () => {
      const pgDb = `${dbName}_pg`;
      const pgPrefix = `${prefix}pg_`;
      await admin(`CREATE DATABASE ${pgDb}`);
      try {
        const out = await chartSecretOn(pgDb, pgPrefix, ["--search-engine", "postgres"]);
        const pgData = out.data;
        // the chart with search.engine postgres refers to KNOWLEDGE_DATABASE_URL (aps.component merges database: true)
        expect(pgData.KNOWLEDGE_DATABASE_URL).toContain(`${pgPrefix}knowledge:`);
        expect(out.sql).toContain("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA knowledge;");
        await admin(out.sql, pgDb);
        // the knowledge role has no CREATE on the database: without the extension made for it, its
        // migration failed with "permission denied to create extension pg_trgm"
        await migrateSchema("knowledge", { ...identityConfig({}), DATABASE_URL: pgData.KNOWLEDGE_DATABASE_URL! }, log, [
          PLATFORM_MIGRATIONS_DIR,
          join(ROOT, "services/knowledge/dist/store/migrations"),
        ]);
        const c = new pg.Client({ connectionString: pgData.KNOWLEDGE_DATABASE_URL });
        await c.connect();
        try {
          const r = await c.query<{ sim: number }>("SELECT similarity('proposal', 'proposals') AS sim");
          expect(r.rows[0]!.sim).toBeGreaterThan(0.5);
        } finally {
          await c.end();
        }
      } finally {
        await admin(`DROP DATABASE IF EXISTS ${pgDb} WITH (FORCE)`).catch(() => undefined);
        for (const owner of ["gateway", "identity", "forum", "council", "notifications", "translation", "knowledge"])
          await admin(`DROP ROLE IF EXISTS ${pgPrefix}${owner}`).catch(() => undefined);
      }
    }, 120_000);

    it("a service's own migration URL wins over the shared one (per-service roles behind a pooler)", () => {
      const cfg = identityConfig({
        IDENTITY_DATABASE_MIGRATION_URL: "postgres://own/db",
        DATABASE_MIGRATION_URL: "postgres://shared/db",
      });
      expect(cfg.DATABASE_MIGRATION_URL).toBe("postgres://own/db");
      expect(identityConfig({ DATABASE_MIGRATION_URL: "postgres://shared/db" }).DATABASE_MIGRATION_URL).toBe(
        "postgres://shared/db",
      );
    });

    it("its tokens and digests work on real gRPC: identity accepts the gateway's token, refuses another", async () => {
      const cfg = identityConfig({
        IDENTITY_DATABASE_URL: data.IDENTITY_DATABASE_URL,
        APS_INTERNAL_TOKEN: data.APS_INTERNAL_TOKEN_IDENTITY,
        APS_PEER_DIGESTS: data.APS_PEER_DIGESTS_IDENTITY,
        IDENTITY_LISTEN_ADDR: "127.0.0.1:0",
      });
      const deps = await openServiceDeps("identity", cfg, new InProcessBus(log), log);
      const svc = await startIdentity(deps, {
        listenAddr: cfg.IDENTITY_LISTEN_ADDR,
        forumAddr: "127.0.0.1:1",
        joinsPerSourcePerDay: 100,
      });
      const addr = `127.0.0.1:${svc.port}`;
      const genuine = serviceClient(identityProto.IdentityServiceDefinition, addr, {
        caller: { name: "gateway", token: data.APS_INTERNAL_TOKEN_GATEWAY! },
      });
      const forged = serviceClient(identityProto.IdentityServiceDefinition, addr, {
        caller: { name: "gateway", token: data.APS_INTERNAL_TOKEN_FORUM! },
      });
      try {
        expect((await genuine.countSeats({ seat: "councillor" })).count).toBe(0);
        const refused = forged.countSeats({ seat: "councillor" }).then(
          () => GrpcStatus.OK,
          (err: unknown) => ((err as ApsError).cause as { code?: number } | undefined)?.code,
        );
        expect(await refused).toBe(GrpcStatus.UNAUTHENTICATED);
      } finally {
        genuine.close();
        forged.close();
        await svc.stop();
      }
    }, 120_000);
  },
);
