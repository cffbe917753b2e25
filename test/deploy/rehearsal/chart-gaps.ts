import { docker } from "@aps/testkit";
import type { Cluster } from "./cluster.js";

/**
 * What the rehearsal found the chart does not do, and does in its place — each one a finding to
 * fix in the chart, run here as the operator step a platform team would otherwise have to find
 * out, and printed loudly when applied.
 */

/** One gap: what the chart lacks, and the operator step that stands in for it. */
export interface ChartGap {
  what: string;
  step: string;
}

/**
 * The in-chart PostgreSQL with `search.engine: postgres`: knowledge's migration runs
 * `CREATE EXTENSION IF NOT EXISTS pg_trgm` as the role aps_knowledge, and pg_trgm (a trusted
 * extension) needs CREATE on the database — which no role has (the chart's init script revokes it
 * from PUBLIC; PostgreSQL never grants it by default either). The Job fails with "permission
 * denied to create extension pg_trgm". Stand-in: the superuser creates the extension in the
 * knowledge schema once, before the Jobs (the migration then leaves it where it is) — unless the
 * rendered init script already creates it.
 * Runs `psql` in the PostgreSQL pod; resolves with the gaps applied; rejects when psql fails.
 */
export async function applyChartGaps(c: Cluster): Promise<ChartGap[]> {
  const gaps: ChartGap[] = [];
  const knowledge = c.ctx.objects.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-knowledge"));
  const env = knowledge?.spec.template.spec.containers[0].env ?? [];
  const postgresEngine = env.some(
    (e: { name: string; value?: string }) => e.name === "KNOWLEDGE_ENGINE" && e.value === "postgres",
  );
  const pg = [...c.pods.entries()].find(([k]) => k.startsWith("StatefulSet/") && k.endsWith("-postgresql"))?.[1][0];
  // a chart whose PostgreSQL init script creates the extension itself has no gap here
  const init = c.ctx.objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-postgresql-init"));
  const chartCreatesIt = Object.values(init?.data ?? {}).some((t) => /CREATE EXTENSION[^;]*pg_trgm/i.test(t));
  if (postgresEngine && pg && !chartCreatesIt) {
    const sts = c.ctx.objects.find((o) => o.kind === "StatefulSet" && o.metadata.name.endsWith("-postgresql"))!;
    const pgEnv = sts.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
    const user = pgEnv.find((e) => e.name === "POSTGRES_USER")?.value ?? "postgres";
    const db = pgEnv.find((e) => e.name === "POSTGRES_DB")?.value ?? user;
    const step = "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA knowledge";
    await docker(
      "exec",
      pg.containerName,
      "psql",
      "-v",
      "ON_ERROR_STOP=1",
      "-h",
      "/var/run/postgresql",
      "-U",
      user,
      "-d",
      db,
      "-c",
      step,
    );
    gaps.push({
      what: "aps_knowledge may not create pg_trgm (no CREATE on the database) — knowledge's migration Job fails",
      step,
    });
  }
  for (const g of gaps) console.warn(`[rehearsal] CHART GAP: ${g.what}; applied in its place: ${g.step}`);
  return gaps;
}
