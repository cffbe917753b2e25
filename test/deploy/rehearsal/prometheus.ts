import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, waitUntil } from "@aps/testkit";
import type { Manifest } from "../../ops/chart-tools.js";
import type { Pod } from "./pod.js";

/**
 * A real Prometheus (Debian's `prometheus` package) beside the rehearsal, configured from what the
 * chart renders, as the Prometheus Operator would: the PodMonitor's selector, port and path become
 * a scrape job over the matching pods (file-based discovery, rewritten as pods come and go: the
 * operator's Kubernetes discovery), with the operator's target labels (`job` from the PodMonitor's
 * `jobLabel`, `namespace`, `pod`, `container`, `endpoint`); the PrometheusRule's groups are its
 * rule file. Scrapes and rule evaluations every 2 s, so a few minutes of rehearsal are enough.
 * Used by the rehearsal's observability check (docs/operations/rehearsal.md).
 */

/** Where the Debian package puts the server. */
export const PROMETHEUS_BIN = process.env.APS_TEST_PROMETHEUS ?? "/usr/bin/prometheus";
/** Seconds between scrapes and between rule evaluations. */
export const SCRAPE_SECONDS = 2;

/** One query of a dashboard panel, with Grafana's variables left in. */
export interface PanelQuery {
  dashboard: string;
  panel: string;
  expr: string;
}

/** Every panel query of the dashboard ConfigMaps in `objects` (rows nest theirs when collapsed). */
export function dashboardQueries(objects: readonly Manifest[]): PanelQuery[] {
  const out: PanelQuery[] = [];
  for (const cm of objects.filter((o) => o.kind === "ConfigMap" && o.metadata.labels?.grafana_dashboard)) {
    for (const [file, text] of Object.entries(cm.data as Record<string, string>)) {
      const d = JSON.parse(text);
      const panels = (d.panels ?? []).flatMap((p: any) => [p, ...(p.panels ?? [])]);
      for (const p of panels)
        for (const t of p.targets ?? []) if (t.expr) out.push({ dashboard: file, panel: p.title, expr: t.expr });
    }
  }
  return out;
}

/**
 * `expr` with Grafana's variables as the dashboard would fill them: `$namespace` the release's,
 * `$__rate_interval` 30 s (four scrape intervals of this Prometheus, Grafana's rule, and more than the rehearsal's gaps).
 */
export function grafanaExpr(expr: string, namespace: string): string {
  return expr.replaceAll("$namespace", namespace).replaceAll("$__rate_interval", "30s");
}

/** A running Prometheus and what it was configured from. */
export class RehearsalPrometheus {
  /** When it started scraping (ms since the epoch). */
  readonly startedAt = Date.now();

  private constructor(
    private readonly child: ChildProcess,
    /** Its HTTP API, `http://127.0.0.1:<port>`. */
    readonly url: string,
    private readonly targetsFile: string,
    private readonly monitor: Manifest,
    private readonly namespace: string,
    private readonly logLines: string[],
  ) {}

  /**
   * Starts Prometheus with a scrape job for the PodMonitor in `objects` and the PrometheusRule's
   * groups as rules; files under `dir`. Resolves once `/-/ready` answers 200; rejects (with its
   * log) when the binary is missing, exits or is not ready within 60 s.
   */
  static async start(objects: readonly Manifest[], dir: string, namespace: string): Promise<RehearsalPrometheus> {
    if (!existsSync(PROMETHEUS_BIN)) throw new Error(`${PROMETHEUS_BIN} not found (Debian package prometheus)`);
    const monitor = objects.find((o) => o.kind === "PodMonitor");
    const rule = objects.find((o) => o.kind === "PrometheusRule");
    if (!monitor || !rule)
      throw new Error("the render has no PodMonitor or PrometheusRule (metrics.podMonitor / prometheusRule)");
    mkdirSync(join(dir, "prometheus-data"), { recursive: true });
    const endpoint = monitor.spec.podMetricsEndpoints[0];
    const targetsFile = join(dir, "prometheus-targets.json");
    writeFileSync(targetsFile, "[]");
    writeFileSync(join(dir, "prometheus-rules.json"), JSON.stringify({ groups: rule.spec.groups }));
    // JSON is YAML: the config as JSON
    const config = {
      global: {
        scrape_interval: `${SCRAPE_SECONDS}s`,
        scrape_timeout: "1s",
        evaluation_interval: `${SCRAPE_SECONDS}s`,
      },
      rule_files: [join(dir, "prometheus-rules.json")],
      scrape_configs: [
        {
          job_name: `podMonitor/${namespace}/${monitor.metadata.name}/0`,
          metrics_path: endpoint.path ?? "/metrics",
          file_sd_configs: [{ files: [targetsFile], refresh_interval: "1s" }],
        },
      ],
    };
    writeFileSync(join(dir, "prometheus.json"), JSON.stringify(config));
    const port = await freePort();
    const logLines: string[] = [];
    const child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${join(dir, "prometheus.json")}`,
        `--storage.tsdb.path=${join(dir, "prometheus-data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const keep = (b: Buffer) => logLines.push(...b.toString().split("\n").filter(Boolean).slice(-50));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const p = new RehearsalPrometheus(child, `http://127.0.0.1:${port}`, targetsFile, monitor, namespace, logLines);
    await waitUntil(
      "Prometheus ready",
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${logLines.join("\n")}`);
        return (await fetch(`${p.url}/-/ready`).catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 60_000 },
    );
    return p;
  }

  /**
   * Points the scrape job at the pods of `pods` the PodMonitor selects (its matchLabels), each at
   * its `port`-named container port, labelled as the operator labels a PodMonitor target. The file
   * is replaced atomically; Prometheus reads it within a second.
   */
  setTargets(pods: readonly Pod[]): void {
    const match = this.monitor.spec.selector.matchLabels as Record<string, string>;
    const endpoint = this.monitor.spec.podMetricsEndpoints[0];
    const jobLabel: string = this.monitor.spec.jobLabel;
    const groups = pods
      .filter((p) => Object.entries(match).every(([k, v]) => p.labels[k] === v))
      .flatMap((p) => {
        const port = p.ports.find((x) => x.name === endpoint.port)?.containerPort;
        if (!port) return [];
        const labels: Record<string, string> = {
          job: p.labels[jobLabel] ?? "",
          namespace: this.namespace,
          pod: p.name,
          container: p.container.name,
          endpoint: endpoint.port,
        };
        for (const l of this.monitor.spec.podTargetLabels ?? [])
          if (p.labels[l] !== undefined) labels[l.replace(/[^a-zA-Z0-9_]/g, "_")] = p.labels[l]!;
        return [{ targets: [`${p.ip}:${port}`], labels }];
      });
    writeFileSync(`${this.targetsFile}.tmp`, JSON.stringify(groups));
    renameSync(`${this.targetsFile}.tmp`, this.targetsFile);
  }

  /**
   * A range query from `startMs` to now (ms since the epoch) at `SCRAPE_SECONDS` steps, as a
   * dashboard panel runs its query over the dashboard's time range; resolves with its series
   * (each with its samples); rejects on an error answer.
   */
  async queryRange(
    expr: string,
    startMs: number,
  ): Promise<Array<{ metric: Record<string, string>; values: unknown[] }>> {
    const q = new URLSearchParams({
      query: expr,
      start: String(startMs / 1000),
      end: String(Date.now() / 1000),
      step: `${SCRAPE_SECONDS}s`,
    });
    const r = await fetch(`${this.url}/api/v1/query_range?${q}`);
    const body = await r.json();
    if (body.status !== "success") throw new Error(`query_range ${expr}: ${body.error ?? r.status}`);
    return body.data.result;
  }

  /** An instant query; resolves with its result vector; rejects on an error answer. */
  async query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
    const r = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = await r.json();
    if (body.status !== "success") throw new Error(`query ${expr}: ${body.error ?? r.status}`);
    return body.data.resultType === "vector" ? body.data.result : [];
  }

  /** The scrape targets as Prometheus sees them: each pod and its health. */
  async targets(): Promise<Array<{ pod: string; health: string; lastError: string }>> {
    const body = await (await fetch(`${this.url}/api/v1/targets?state=active`)).json();
    return body.data.activeTargets.map((t: any) => ({ pod: t.labels.pod, health: t.health, lastError: t.lastError }));
  }

  /** The rule groups' rules that failed their last evaluation, `group/rule: error`. */
  async ruleErrors(): Promise<string[]> {
    const body = await (await fetch(`${this.url}/api/v1/rules`)).json();
    return body.data.groups.flatMap((g: any) =>
      g.rules.filter((r: any) => r.health !== "ok").map((r: any) => `${g.name}/${r.name}: ${r.lastError ?? r.health}`),
    );
  }

  /** Stops it (SIGTERM) and resolves once it exited. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    await exited;
  }
}
