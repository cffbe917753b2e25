import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  chartTools,
  promtoolMissing,
  PROD_VALUES,
  PROMTOOL,
  renderChart,
  ROOT,
  type Manifest,
  type Tools,
} from "./chart-tools.js";

/**
 * The Grafana dashboards (charts/aps/dashboards/*.json, built as code by scripts/dashboards.mjs with
 * Grafana's foundation SDK; docs/observability.md "Dashboards"): the committed files are what the
 * script builds; the chart ships each as a ConfigMap the Grafana sidecar finds (values-production
 * turns them on); every panel's query is valid PromQL (`promtool check rules`) and reads only
 * series APS exports (a metric the code registers, or a recording rule of the chart), of one
 * namespace. That each query returns data from live pods is the production rehearsal's part.
 */
const run = promisify(execFile);
const tools = await chartTools();
const missing = promtoolMissing(tools, "the dashboard tests");

/** Every target expression of a dashboard's panels (rows nest theirs when collapsed). */
function exprsOf(d: any): Array<{ panel: string; expr: string }> {
  const panels = (d.panels ?? []).flatMap((p: any) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => ({ panel: p.title, expr: t.expr as string })));
}

/** The aps_* metric names the services register (prom-client `name: "aps_…"` in their sources). */
function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules" && e.name !== "dist" && e.name !== "gen") walk(p);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
        for (const m of readFileSync(p, "utf8").matchAll(/name: "(aps_[a-z_]+)"/g)) names.add(m[1]!);
    }
  };
  for (const top of ["packages", "services"])
    for (const pkg of readdirSync(join(ROOT, top))) {
      try {
        walk(join(ROOT, top, pkg, "src"));
      } catch {
        // a folder without src/
      }
    }
  return names;
}

(missing ? describe.skip : describe)(
  missing ? `Grafana dashboards (SKIPPED: ${missing})` : 'Grafana dashboards (docs/observability.md "Dashboards")',
  () => {
    let ms: Manifest[];
    let dir: string;
    beforeAll(async () => {
      if ("skipReason" in tools) return;
      ms = await renderChart(tools, ["-f", PROD_VALUES]);
      dir = mkdtempSync(join(tmpdir(), "aps-dashboards-"));
    }, 120_000);
    afterAll(() => (dir ? rmSync(dir, { recursive: true, force: true }) : undefined));

    it("the committed JSON is what scripts/dashboards.mjs builds", async () => {
      const out = await run(process.execPath, [join(ROOT, "scripts/dashboards.mjs"), "--check"], { cwd: ROOT }).then(
        (r) => ({ code: 0, text: r.stdout + r.stderr }),
        (err) => ({ code: err.code as number, text: `${err.stdout}${err.stderr}` }),
      );
      expect(out).toEqual({ code: 0, text: expect.stringMatching(/up to date/) });
    });

    it("values-production ships each as a ConfigMap labelled for the Grafana sidecar, with a unique uid and the datasource and namespace variables", () => {
      const files = readdirSync(join(ROOT, "charts/aps/dashboards")).filter((f) => f.endsWith(".json"));
      const cms = ms.filter((m) => m.kind === "ConfigMap" && m.metadata.labels?.grafana_dashboard === "1");
      expect(cms.map((c) => Object.keys(c.data!)[0]).sort()).toEqual(files.map((f) => `aps-${f}`).sort());
      const dashboards = cms.map((c) => JSON.parse(Object.values(c.data!)[0]!));
      expect(new Set(dashboards.map((d) => d.uid)).size).toBe(files.length);
      for (const d of dashboards) {
        expect({ uid: d.uid, vars: d.templating.list.map((v: any) => v.name) }).toEqual({
          uid: d.uid,
          vars: ["datasource", "namespace"],
        });
        expect(exprsOf(d).length).toBeGreaterThan(3);
      }
    });

    it("renders no dashboard by default", async () => {
      const plain = await renderChart(tools as Tools);
      expect(plain.filter((m) => m.metadata.labels?.grafana_dashboard !== undefined)).toEqual([]);
    });

    it("every query is valid PromQL of one namespace over series APS exports or the chart records", async () => {
      const rule = ms.find((m) => m.kind === "PrometheusRule")!;
      const recorded = new Set<string>(
        rule.spec.groups
          .flatMap((g: any) => g.rules)
          .map((r: any) => r.record)
          .filter(Boolean),
      );
      const metrics = registeredMetrics();
      const known = (name: string) =>
        name.startsWith("aps:")
          ? recorded.has(name)
          : name.startsWith("process_") || metrics.has(name.replace(/_(bucket|count|sum)$/, ""));
      const files = readdirSync(join(ROOT, "charts/aps/dashboards")).filter((f) => f.endsWith(".json"));
      const all = files.flatMap((f) =>
        exprsOf(JSON.parse(readFileSync(join(ROOT, "charts/aps/dashboards", f), "utf8"))).map((e) => ({
          file: f,
          ...e,
        })),
      );
      const unknown = all.flatMap(({ file, panel, expr }) =>
        [...expr.matchAll(/\b(aps[:_][a-z0-9_:]+|process_[a-z_]+)\s*\{/g)]
          .map((m) => m[1]!)
          .filter((n) => !known(n))
          .map((n) => `${file} "${panel}": ${n}`),
      );
      expect(unknown).toEqual([]);
      // every selector carries the namespace variable
      const unscoped = all.filter(({ expr }) =>
        [...expr.matchAll(/\{([^}]*)\}/g)].some((m) => !m[1]!.includes('namespace="$namespace"')),
      );
      expect(unscoped).toEqual([]);
      // PromQL syntax: each query as a recording rule, Grafana's variables filled in
      const rules = all.map(({ expr }, i) => ({
        record: `dashboard:check:${i}`,
        expr: expr.replaceAll("$namespace", "aps").replaceAll("$__rate_interval", "5m"),
      }));
      const file = join(dir, "dashboard-queries.yaml");
      writeFileSync(file, JSON.stringify({ groups: [{ name: "dashboards", rules }] }));
      const out = await run(PROMTOOL!, ["check", "rules", file]).then(
        (r) => ({ code: 0, text: r.stdout }),
        (err) => ({ code: err.code as number, text: `${err.stdout}${err.stderr}` }),
      );
      expect(out).toEqual({ code: 0, text: expect.stringContaining(`SUCCESS: ${rules.length} rules found`) });
      console.log(`[dashboards] ${files.length} dashboards, ${rules.length} queries valid`);
    });
  },
);
