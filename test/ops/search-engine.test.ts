import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadConfig as knowledgeConfig, wantsDatabase } from "@aps/knowledge";
import { createTestDatabase, hasPostgres, queryRows } from "@aps/testkit";
import { chartTools, renderChart, ROOT, type Manifest, type Tools } from "./chart-tools.js";

/**
 * `search.engine: postgres` (docs/design/search-and-translation.md#search-engines): the knowledge service keeps its index in its own
 * schema of the platform's PostgreSQL — nothing of Meilisearch is deployed or referenced, knowledge
 * gets a database role, URL, NetworkPolicy egress and a migration Job like the other schema owners —
 * and the knowledge env the chart renders selects the PostgreSQL engine, whose migration Job
 * command applies the knowledge schema on the real PostgreSQL.
 */
const run = promisify(execFile);
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;
const pgUp = await hasPostgres();

const envOf = (m: Manifest) =>
  Object.fromEntries(
    (m.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>).map((e) => [e.name, e.value]),
  );

(skipReason ? describe.skip : describe)(
  skipReason ? `search.engine: postgres (SKIPPED: ${skipReason})` : "search.engine: postgres",
  () => {
    let ms: Manifest[];
    beforeAll(async () => {
      ms = await renderChart(tools as Tools, ["--set", "search.engine=postgres", "--is-upgrade"]);
    }, 120_000);
    const byName = (kind: string, name: string) => ms.find((m) => m.kind === kind && m.metadata.name === name);

    it("deploys and references no Meilisearch", async () => {
      expect(JSON.stringify(ms).toLowerCase()).not.toContain("meili");
      // and the default still does
      const meili = await renderChart(tools as Tools);
      expect(meili.some((m) => m.kind === "StatefulSet" && m.metadata.name === "aps-meilisearch")).toBe(true);
    });

    it("gives knowledge a role, a URL, a way to PostgreSQL and a migration Job, like every schema owner", () => {
      const env = envOf(byName("Deployment", "aps-knowledge")!);
      expect(env.KNOWLEDGE_ENGINE).toBe("postgres");
      expect(env.DATABASE_URL).toMatch(/^postgresql:\/\/aps_knowledge:/);
      const init = byName("ConfigMap", "aps-postgresql-init");
      expect(JSON.stringify(init!.data)).toContain("CREATE SCHEMA knowledge AUTHORIZATION aps_knowledge");
      // aps_knowledge has no CREATE on the database: the superuser makes its trigram extension (the
      // production rehearsal's knowledge Job failed without it: "permission denied to create extension")
      expect(JSON.stringify(init!.data)).toContain("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA knowledge");
      const policy = byName("NetworkPolicy", "aps-knowledge")!;
      expect(JSON.stringify(policy.spec.egress)).toContain('"app.kubernetes.io/component":"postgresql"');
      expect(byName("Job", "aps-knowledge-migrate")).toBeDefined();
    });

    (pgUp ? it : it.skip)(
      pgUp
        ? "its env selects the PostgreSQL engine, and its Job's command applies the knowledge schema"
        : "its env selects the PostgreSQL engine (SKIPPED: no PostgreSQL)",
      async () => {
        const db = await createTestDatabase();
        try {
          const env = { ...envOf(byName("Deployment", "aps-knowledge")!), DATABASE_URL: db.url };
          const cfg = knowledgeConfig(env);
          expect({ postgres: wantsDatabase(cfg), url: cfg.indexDatabaseUrl }).toEqual({ postgres: true, url: db.url });
          const job = byName("Job", "aps-knowledge-migrate")!;
          const args = job.spec.template.spec.containers[0].args as string[];
          const jobEnv: Record<string, string | undefined> = {
            ...envOf(job),
            DATABASE_URL: db.url,
            LOG_LEVEL: "info",
            OTEL_SDK_DISABLED: "true",
          };
          delete jobEnv.OTEL_EXPORTER_OTLP_ENDPOINT;
          await run(process.execPath, [join(ROOT, args[0]!)], { cwd: ROOT, env: { ...process.env, ...jobEnv } });
          const rows = await queryRows<{ n: string }>(db.url, "SELECT count(*)::text AS n FROM knowledge.pgmigrations");
          expect(Number(rows[0]!.n)).toBeGreaterThan(0);
        } finally {
          await db.drop();
        }
      },
      120_000,
    );
  },
);
