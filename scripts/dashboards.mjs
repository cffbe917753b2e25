#!/usr/bin/env node
// The Grafana dashboards of APS as code (docs/observability.md "Dashboards"), built with Grafana's
// foundation SDK (@grafana/grafana-foundation-sdk) and written to charts/aps/dashboards/*.json, which
// the chart ships as ConfigMaps for Grafana's dashboard sidecar (metrics.dashboards.enabled).
// Every query reads the metrics of docs/observability.md, of one namespace ($namespace).
//
//   node scripts/dashboards.mjs           writes the files
//   node scripts/dashboards.mjs --check   exits 1 when a committed file differs from a fresh build (CI)
import { readFileSync, writeFileSync, mkdirSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { PanelBuilder as TimeseriesBuilder } from "@grafana/grafana-foundation-sdk/timeseries";
import { PanelBuilder as TableBuilder } from "@grafana/grafana-foundation-sdk/table";
import { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Where the chart reads them (charts/aps/templates/dashboards.yaml). */
export const DASHBOARD_DIR = join(root, "charts/aps/dashboards");

const DS = { type: "prometheus", uid: "${datasource}" };
/** The namespace selector every query carries. */
const NS = 'namespace="$namespace"';
const RATE = "$__rate_interval";

/** A Prometheus query with its legend. */
const q = (expr, legend) =>
  new DataqueryBuilder()
    .datasource(DS)
    .expr(expr)
    .legendFormat(legend ?? "__auto");

/** A time series panel: `title`, `unit` (Grafana's unit id), one query per `[expr, legend]`. */
function series(title, unit, queries, { w = 12, description } = {}) {
  const p = new TimeseriesBuilder().title(title).datasource(DS).unit(unit).height(8).span(w);
  if (description) p.description(description);
  for (const [expr, legend] of queries) p.withTarget(q(expr, legend));
  return p;
}

/** A histogram's quantile `qt` (0.5, 0.95, 0.99) of `metric`, grouped by `by` ("" = overall). */
const quantile = (qt, metric, by = "", extra = "") =>
  `histogram_quantile(${qt}, sum by (le${by ? `, ${by}` : ""}) (rate(${metric}_bucket{${NS}${extra}}[${RATE}])))`;

/** The two variables of every dashboard: the Prometheus data source and the release's namespace. */
function variables(d) {
  return d
    .withVariable(new DatasourceVariableBuilder("datasource").label("Data source").type("prometheus"))
    .withVariable(
      new QueryVariableBuilder("namespace")
        .label("Namespace")
        .datasource(DS)
        .query("label_values(aps_build_info, namespace)")
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc),
    );
}

/** A dashboard with the shared settings: uid `aps-<slug>`, tags, 1 h window, 30 s refresh. */
function dashboard(slug, title, description) {
  return variables(
    new DashboardBuilder(title)
      .uid(`aps-${slug}`)
      .description(description)
      .tags(["aps"])
      .time({ from: "now-1h", to: "now" })
      .refresh("30s")
      .timezone("browser")
      .readonly(),
  );
}

/** The dashboards by file name (without .json). */
export function buildDashboards() {
  const api = dashboard(
    "api",
    "APS / API",
    "The gateway's HTTP API: rate, errors and duration per route (RED), and the SLOs of docs/observability.md.",
  )
    .withRow(new RowBuilder("Traffic and errors"))
    .withPanel(
      series("Requests per second by route", "reqps", [
        [`sum by (route) (rate(aps_http_requests_total{${NS}}[${RATE}]))`, "{{route}}"],
      ]),
    )
    .withPanel(
      series("5xx ratio by route", "percentunit", [
        [
          // `or … * 0`: a route with no 5xx reads 0, not "no data"
          `(sum by (route) (rate(aps_http_requests_total{${NS},status=~"5.."}[${RATE}])) or sum by (route) (rate(aps_http_requests_total{${NS}}[${RATE}])) * 0) / sum by (route) (rate(aps_http_requests_total{${NS}}[${RATE}]))`,
          "{{route}}",
        ],
      ]),
    )
    .withPanel(
      series("Responses per second by status", "reqps", [
        [`sum by (status) (rate(aps_http_requests_total{${NS}}[${RATE}]))`, "{{status}}"],
      ]),
    )
    .withPanel(
      series("4xx per second by route", "reqps", [
        [`sum by (route) (rate(aps_http_requests_total{${NS},status=~"4.."}[${RATE}]))`, "{{route}}"],
      ]),
    )
    .withRow(new RowBuilder("Duration"))
    .withPanel(
      series("Request duration, all routes", "s", [
        [quantile(0.5, "aps_http_request_duration_seconds"), "p50"],
        [quantile(0.95, "aps_http_request_duration_seconds"), "p95"],
        [quantile(0.99, "aps_http_request_duration_seconds"), "p99"],
      ]),
    )
    .withPanel(
      series("p95 duration by route", "s", [
        [quantile(0.95, "aps_http_request_duration_seconds", "route"), "{{route}}"],
      ]),
    )
    .withRow(new RowBuilder("SLOs (recording rules of the chart's PrometheusRule)"))
    .withPanel(
      series(
        "Error ratio (availability SLO)",
        "percentunit",
        ["5m", "1h", "6h"].map((w) => [`aps:http_error_ratio:rate${w}{${NS}}`, w]),
        {
          description:
            "5xx share of requests over each window; the burn-rate alerts compare these with the error budget.",
        },
      ),
    )
    .withPanel(
      series(
        "Slow ratio (latency SLO)",
        "percentunit",
        ["5m", "1h", "6h"].map((w) => [`aps:http_slow_ratio:rate${w}{${NS}}`, w]),
        { description: "Share of requests slower than the latency threshold over each window." },
      ),
    )
    .withPanel(
      series("Gateway cache lookups by cache and result", "ops", [
        [`sum by (cache, result) (rate(aps_gateway_cache_lookups_total{${NS}}[${RATE}]))`, "{{cache}} {{result}}"],
      ]),
    )
    .withRow(new RowBuilder("What runs"))
    .withPanel(
      new TableBuilder()
        .title("Builds serving")
        .datasource(DS)
        .height(6)
        .span(24)
        .withTarget(q(`count by (version, revision, node) (aps_build_info{${NS}})`, "{{version}} {{revision}}")),
    );

  const services = dashboard(
    "services",
    "APS / Services",
    "The gRPC services: calls, errors and duration per method, PostgreSQL pools, process CPU and memory.",
  )
    .withRow(new RowBuilder("gRPC"))
    .withPanel(
      series("Calls per second by method", "reqps", [
        [`sum by (method) (rate(aps_grpc_server_handled_total{${NS}}[${RATE}]))`, "{{method}}"],
      ]),
    )
    .withPanel(
      series("Errors per second by method and code", "reqps", [
        [
          `sum by (method, code) (rate(aps_grpc_server_handled_total{${NS},code!="0"}[${RATE}]))`,
          "{{method}} {{code}}",
        ],
      ]),
    )
    .withPanel(
      series(
        "p95 duration by method",
        "s",
        [[quantile(0.95, "aps_grpc_server_handling_seconds", "method"), "{{method}}"]],
        {
          w: 24,
        },
      ),
    )
    .withRow(new RowBuilder("PostgreSQL pools"))
    .withPanel(
      series("Pool connections by service and state", "short", [
        [`sum by (service, state) (aps_db_pool_connections{${NS},state=~"busy|idle"})`, "{{service}} {{state}}"],
        [`sum by (service) (aps_db_pool_connections{${NS},state="max"})`, "{{service}} max"],
      ]),
    )
    .withPanel(
      series(
        "Queries waiting for a connection",
        "short",
        [[`sum by (service) (aps_db_pool_connections{${NS},state="waiting"})`, "{{service}}"]],
        { description: "Above 0 for minutes: APSDatabasePoolSaturated (docs/runbooks/APSDatabasePoolSaturated.md)." },
      ),
    )
    .withRow(new RowBuilder("Processes"))
    .withPanel(
      series("CPU by pod", "percentunit", [
        [`sum by (pod) (rate(process_cpu_seconds_total{${NS}}[${RATE}]))`, "{{pod}}"],
      ]),
    )
    .withPanel(
      series("Resident memory by pod", "bytes", [[`sum by (pod) (process_resident_memory_bytes{${NS}})`, "{{pod}}"]]),
    );

  const events = dashboard(
    "events",
    "APS / Events",
    "Events between the services: outboxes, consumers, the dead-letter queue, work queues and retention.",
  )
    .withRow(new RowBuilder("Publishing and consuming"))
    .withPanel(
      series("Outbox backlog by service", "short", [[`max by (service) (aps_outbox_backlog{${NS}})`, "{{service}}"]], {
        description: "Events written with their change, not yet published (APSOutboxBacklog).",
      }),
    )
    .withPanel(
      series("Pending events by consumer", "short", [
        [`max by (durable) (aps_consumer_pending{${NS}})`, "{{durable}}"],
      ]),
    )
    .withPanel(
      series("Deliveries and failures per second by consumer", "ops", [
        [`sum by (durable) (rate(aps_consumer_deliveries_total{${NS}}[${RATE}]))`, "{{durable}} delivered"],
        [`sum by (durable) (rate(aps_consumer_failures_total{${NS}}[${RATE}]))`, "{{durable}} failed"],
      ]),
    )
    .withPanel(
      series("Dead-letter queue by consumer", "short", [
        [`max by (durable) (aps_dead_letter_events{${NS}})`, "{{durable}} parked now"],
        [`sum by (durable, kind) (increase(aps_events_parked_total{${NS}}[1h]))`, "{{durable}} {{kind}} parked in 1 h"],
      ]),
    )
    .withRow(new RowBuilder("Webhooks"))
    .withPanel(
      series("Webhook attempts per second by outcome", "ops", [
        [`sum by (outcome) (rate(aps_webhook_attempts_total{${NS}}[${RATE}]))`, "{{outcome}}"],
      ]),
    )
    .withPanel(
      series(
        "Webhook delivery lag and attempt duration",
        "s",
        [
          [quantile(0.99, "aps_webhook_delivery_lag_seconds"), "lag p99 (due → 2xx)"],
          [quantile(0.5, "aps_webhook_delivery_lag_seconds"), "lag p50"],
          [quantile(0.95, "aps_webhook_attempt_seconds"), "attempt p95"],
        ],
        {
          description: "APSWebhookDeliveryLagHigh fires on the lag's p99 (docs/runbooks/APSWebhookDeliveryLagHigh.md).",
        },
      ),
    )
    .withPanel(
      series("Endpoints disabled per hour", "short", [
        [`sum(increase(aps_webhook_endpoints_disabled_total{${NS}}[1h]))`, "disabled"],
      ]),
    )
    .withPanel(
      series("Event stream: bytes held and its limit", "bytes", [
        [`max(aps_event_stream_usage{${NS},measure="bytes"})`, "held"],
        [`max(aps_event_stream_limit{${NS},limit="max_bytes"})`, "max_bytes"],
      ]),
    )
    .withPanel(
      series("Live event streams (SSE): open and refused", "short", [
        [`sum(aps_event_streams_open{${NS}})`, "open"],
        [`sum by (reason) (increase(aps_event_stream_refusals_total{${NS}}[5m]))`, "refused {{reason}} (5 min)"],
      ]),
    )
    .withRow(new RowBuilder("Work queues, projections and retention"))
    .withPanel(
      series("Work queues", "short", [
        [`max by (queue) (aps_work_queue{${NS},measure="depth"})`, "{{queue}} depth"],
        [`max by (queue) (aps_work_queue{${NS},measure="oldest_seconds"})`, "{{queue}} oldest (s)"],
      ]),
    )
    .withPanel(
      series("Council writes waiting for the forum's projection", "ops", [
        [`sum by (result) (rate(aps_case_projection_waits_total{${NS}}[${RATE}]))`, "{{result}}"],
      ]),
    )
    .withPanel(
      series("Retention: rows pruned per second", "rowsps", [
        [`sum by (service, table) (rate(aps_retention_pruned_rows_total{${NS}}[${RATE}]))`, "{{service}}.{{table}}"],
      ]),
    )
    .withPanel(
      series("Retention: failed batches per hour", "short", [
        [`sum by (service, table) (increase(aps_retention_failures_total{${NS}}[1h]))`, "{{service}}.{{table}}"],
      ]),
    );

  const features = dashboard(
    "features",
    "APS / Search, translation, moderation",
    "Search latency per engine, the translation cache and engine, and community flags.",
  )
    .withRow(new RowBuilder("Search"))
    .withPanel(
      series("Search p95 by engine and kind", "s", [
        [quantile(0.95, "aps_search_duration_seconds", "engine, kind"), "{{engine}} {{kind}}"],
      ]),
    )
    .withPanel(
      series("Searches per second by outcome", "ops", [
        [`sum by (outcome) (rate(aps_search_duration_seconds_count{${NS}}[${RATE}]))`, "{{outcome}}"],
      ]),
    )
    .withPanel(
      series("Search cache hit ratio (PostgreSQL engine)", "percentunit", [
        [
          `sum by (cache) (rate(aps_knowledge_cache_lookups_total{${NS},result="hit"}[${RATE}])) / sum by (cache) (rate(aps_knowledge_cache_lookups_total{${NS}}[${RATE}]))`,
          "{{cache}}",
        ],
      ]),
    )
    .withRow(new RowBuilder("Translation"))
    .withPanel(
      series("Translation cache hit ratio", "percentunit", [
        [
          `sum(rate(aps_translation_cache_total{${NS},result="hit"}[${RATE}])) / sum(rate(aps_translation_cache_total{${NS}}[${RATE}]))`,
          "hit ratio",
        ],
      ]),
    )
    .withPanel(
      series("Engine calls per second by outcome", "ops", [
        [
          `sum by (engine, outcome) (rate(aps_translation_engine_calls_total{${NS}}[${RATE}]))`,
          "{{engine}} {{outcome}}",
        ],
      ]),
    )
    .withRow(new RowBuilder("Moderation"))
    .withPanel(
      series("Flags per hour by reason", "short", [
        [`sum by (reason, counted) (increase(aps_flags_total{${NS}}[1h]))`, "{{reason}} counted={{counted}}"],
        [`sum(increase(aps_flags_refused_total{${NS}}[1h]))`, "refused"],
      ]),
    )
    .withPanel(
      series("Hidden by flags per hour", "short", [
        [`sum by (target) (increase(aps_flag_hides_total{${NS}}[1h]))`, "{{target}}"],
      ]),
    );

  return Object.fromEntries(Object.entries({ api, services, events, features }).map(([name, b]) => [name, b.build()]));
}

/** The file text of a dashboard: stable JSON, 2-space indent, newline at the end. */
export const fileText = (d) => `${JSON.stringify(d, null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  const built = buildDashboards();
  let stale = 0;
  if (!check) mkdirSync(DASHBOARD_DIR, { recursive: true });
  for (const [name, d] of Object.entries(built)) {
    const file = join(DASHBOARD_DIR, `${name}.json`);
    const text = fileText(d);
    if (check) {
      if (!existsSync(file) || readFileSync(file, "utf8") !== text) {
        console.error(`stale: ${file} (run node scripts/dashboards.mjs)`);
        stale++;
      }
    } else writeFileSync(file, text);
  }
  if (check) {
    const extra = readdirSync(DASHBOARD_DIR).filter((f) => f.endsWith(".json") && !(f.slice(0, -5) in built));
    for (const f of extra) console.error(`not built by scripts/dashboards.mjs: ${f}`);
    if (stale || extra.length) process.exit(1);
    console.log(`dashboards: ${Object.keys(built).length} up to date`);
  } else console.log(`dashboards: wrote ${Object.keys(built).length} to ${DASHBOARD_DIR}`);
}
