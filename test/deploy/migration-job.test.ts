import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createTestDatabase, queryRows, startNode, type TestDatabase } from "@aps/testkit";
import {
  chartTools,
  postgresMissing,
  PROD_VALUES,
  renderChart,
  ROOT,
  type Manifest,
  type Tools,
} from "../ops/chart-tools.js";

/**
 * Migrations as a step of every upgrade (docs/operations/upgrading.md): the chart renders, on
 * upgrade only, a pre-upgrade hook Job per component that owns a schema, with the component's own
 * env plus APS_MIGRATE_ONLY=1, and its pods get DATABASE_MIGRATIONS=verify. Then each rendered
 * Job's command runs here, as the image would run it, against an empty database on the real
 * PostgreSQL: it applies its schema's migrations (every file recorded) and SQL functions and
 * exits 0; a service in verify mode then starts on that database, and refuses to start — naming
 * the missing migrations — on a database the Job never ran on.
 */
const run = promisify(execFile);
const tools = await chartTools();
const missing = await postgresMissing(tools, "the migration job test");

type Container = { args: string[]; env: Array<{ name: string; value?: string; valueFrom?: unknown }> };
const containerOf = (m: Manifest): Container => m.spec.template.spec.containers[0] as Container;

/** The migration files each schema owner applies: its own folder, and the platform's for the template services. */
function migrationFiles(component: string): string[] {
  const dirOf: Record<string, string[]> = {
    gateway: ["services/gateway/src/migrations"],
    translation: ["services/translation/src/store/migrations"],
  };
  const dirs = dirOf[component] ?? [
    "packages/platform/src/db/migrations",
    `services/${component}/src/store/migrations`,
  ];
  return dirs
    .flatMap((d) => readdirSync(join(ROOT, d)).filter((f) => f.endsWith(".sql")))
    .map((f) => f.replace(/\.sql$/, ""))
    .sort();
}

/** The process env a rendered container's env gives, with the database at `url` (Secret references dropped). */
function envOf(c: Container, url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const e of c.env) if (e.value !== undefined && !e.value.includes("$(")) env[e.name] = e.value;
  // the rendered URLs point at in-cluster hosts; here, the test database (no PgBouncer, no OTel collector)
  for (const k of ["DATABASE_URL", "DATABASE_MIGRATION_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"]) delete env[k];
  return { ...env, DATABASE_URL: url, DATABASE_POOLER: "none", LOG_LEVEL: "info", OTEL_SDK_DISABLED: "true" };
}

(missing ? describe.skip : describe)(
  missing ? `migration jobs (SKIPPED: ${missing})` : "migration jobs: the chart's pre-upgrade hook per schema owner",
  () => {
    let upgrade: Manifest[];
    let install: Manifest[];
    // external PostgreSQL: the Job and the pods take their URL from the Secret, which this test replaces
    const external = [
      "-f",
      PROD_VALUES,
      "--set",
      "postgresql.deployed.enabled=false",
      "--set",
      "pgbouncer.enabled=false",
    ];
    const external2 = [...external, "--set", "postgresql.external.url=postgresql://aps@db.example:5432/aps"];
    beforeAll(async () => {
      upgrade = await renderChart(tools as Tools, [...external2, "--is-upgrade"]);
      install = await renderChart(tools as Tools, external2);
    }, 120_000);
    const jobs = () => upgrade.filter((m) => m.kind === "Job" && m.metadata.labels?.["aps.dev/migrates"]);
    const deploymentOf = (ms: Manifest[], component: string) =>
      ms.find((m) => m.kind === "Deployment" && m.metadata.labels?.["app.kubernetes.io/component"] === component)!;

    it("renders one pre-upgrade Job per component with a schema, with that component's args and env plus APS_MIGRATE_ONLY=1", () => {
      const owners = upgrade
        .filter((m) => m.kind === "Deployment")
        .filter((d) => containerOf(d).env.some((e) => e.name === "DATABASE_MIGRATIONS"))
        .map((d) => d.metadata.labels!["app.kubernetes.io/component"]!)
        .sort();
      expect(owners.length).toBeGreaterThanOrEqual(5);
      expect(
        jobs()
          .map((j) => j.metadata.labels!["aps.dev/migrates"])
          .sort(),
      ).toEqual(owners);
      for (const job of jobs()) {
        const component = job.metadata.labels!["aps.dev/migrates"]!;
        expect(job.metadata.annotations).toMatchObject({
          "helm.sh/hook": "pre-upgrade",
          "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
        });
        expect(job.spec.template.spec.restartPolicy).toBe("Never");
        const pod = containerOf(deploymentOf(upgrade, component));
        const c = containerOf(job);
        expect(c.args).toEqual(pod.args);
        expect(c.env.map((e) => e.name)).toEqual([...pod.env.map((e) => e.name), "APS_MIGRATE_ONLY"]);
        expect(c.env.find((e) => e.name === "APS_MIGRATE_ONLY")?.value).toBe("1");
        // not a Service endpoint: the component label is "migrate", never the component's own
        expect(job.spec.template.metadata.labels["app.kubernetes.io/component"]).toBe("migrate");
      }
      const policy = upgrade.find((m) => m.kind === "NetworkPolicy" && m.metadata.name.endsWith("-migrate"))!;
      expect(policy.metadata.annotations?.["helm.sh/hook"]).toBe("pre-upgrade");
      expect(Number(policy.metadata.annotations?.["helm.sh/hook-weight"])).toBeLessThan(0);
    });

    it("has the pods verify on upgrade and migrate themselves on the first install (no Job then)", () => {
      const mode = (ms: Manifest[]) =>
        new Set(
          ms
            .filter((m) => m.kind === "Deployment")
            .flatMap((d) =>
              containerOf(d)
                .env.filter((e) => e.name === "DATABASE_MIGRATIONS")
                .map((e) => e.value),
            ),
        );
      expect(mode(upgrade)).toEqual(new Set(["verify"]));
      expect(mode(install)).toEqual(new Set(["apply"]));
      expect(install.filter((m) => m.kind === "Job")).toEqual([]);
    });

    describe("run against the real PostgreSQL", () => {
      let db: TestDatabase;
      let empty: TestDatabase;
      beforeAll(async () => {
        [db, empty] = await Promise.all([createTestDatabase(), createTestDatabase()]);
      });
      afterAll(async () => {
        await Promise.all([db?.drop(), empty?.drop()]);
      });

      it("each Job's command applies its schema's migrations and SQL functions and exits 0", async () => {
        for (const job of jobs()) {
          const component = job.metadata.labels!["aps.dev/migrates"]!;
          const c = containerOf(job);
          const { stdout } = await run(process.execPath, [join(ROOT, c.args[0]!)], {
            cwd: ROOT,
            env: { ...process.env, ...envOf(c, db.url) },
            timeout: 120_000,
          });
          expect(stdout).toMatch(/migrations and SQL functions applied \(APS_MIGRATE_ONLY\)/);
          const rows = await queryRows<{ name: string }>(
            db.url,
            `SELECT name FROM ${component}.pgmigrations ORDER BY name`,
          );
          expect(rows.map((r) => r.name)).toEqual(migrationFiles(component));
        }
        // forum's SQL functions (store/functions/) were applied by its Job
        const fns = await queryRows<{ n: string }>(
          db.url,
          "SELECT count(*)::text AS n FROM pg_proc WHERE pronamespace = 'forum'::regnamespace",
        );
        expect(Number(fns[0]!.n)).toBeGreaterThan(0);
      }, 600_000);

      it("a pod in verify mode starts on the migrated database and refuses an unmigrated one, naming what is missing", async () => {
        const pod = containerOf(deploymentOf(upgrade, "identity"));
        const env: NodeJS.ProcessEnv = {
          ...envOf(pod, db.url),
          IDENTITY_LISTEN_ADDR: "127.0.0.1:0",
          METRICS_PORT: "0",
          NATS_URL: "",
        };
        expect(env.DATABASE_MIGRATIONS).toBe("verify");
        const p = await startNode([join(ROOT, pod.args[0]!)], env, /"msg":"gRPC server listening"/);
        await p.stop();

        const refused = await run(process.execPath, [join(ROOT, pod.args[0]!)], {
          cwd: ROOT,
          env: { ...process.env, ...env, DATABASE_URL: empty.url },
          timeout: 120_000,
        }).then(
          () => undefined,
          (err: { code?: number; stdout?: string; stderr?: string }) => err,
        );
        expect(refused).toBeDefined();
        expect(refused!.code).not.toBe(0);
        const out = `${refused!.stdout ?? ""}${refused!.stderr ?? ""}`;
        expect(out).toMatch(/schema identity lacks \d+ migration\(s\)/);
        for (const name of migrationFiles("identity")) expect(out).toContain(name);
        // and it applied nothing there
        const tables = await queryRows<{ n: string }>(
          empty.url,
          "SELECT count(*)::text AS n FROM information_schema.tables WHERE table_schema = 'identity'",
        );
        expect(tables[0]!.n).toBe("0");
      }, 300_000);
    });
  },
);
