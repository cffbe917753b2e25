import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { chartTools, promtoolMissing, PROMTOOL, renderChart, ROOT, type Manifest } from "./chart-tools.js";

/**
 * The chart's alert and SLO rules (charts/aps/templates/prometheusrule.yaml, docs/observability.md
 * "Alerts and SLOs") through a real Prometheus rule engine: `promtool check rules` on the rendered
 * groups, then `promtool test rules` — each alert fires on a failing series with the labels an SRE
 * routes by (namespace first), and stays quiet on a healthy one and on another namespace's series.
 * Every alert has a case here and a runbook page in docs/runbooks/. promtool is Debian's
 * `prometheus` package (.ci/run installs it); without it the suite skips loudly, except under
 * APS_TEST_REQUIRE_REAL=1, where it fails.
 */
const run = promisify(execFile);
const tools = await chartTools();
const missing = promtoolMissing(tools, "the alert rule tests");
const describeTools = missing ? describe.skip : describe;

/** One promtool input series: `series` in PromQL selector form, `values` in promtool's expanding notation. */
type Series = { series: string; values: string };
/** An alert's cases: series on which it fires (with the labels it must carry), and healthy ones. */
interface AlertCase {
  firing: Array<{ input: Series[]; at: string; labels: Record<string, string> }>;
  healthy: { input: Series[]; at: string };
}

const ns = 'namespace="aps"';
const other = 'namespace="other"';
/** The requests of one route: `errors` 5xx and `ok` 2xx a minute, for 90 minutes. */
const requests = (errors: number, ok: number): Series[] => [
  { series: `aps_http_requests_total{${ns},method="GET",route="/v1/posts",status="500"}`, values: `0+${errors}x90` },
  { series: `aps_http_requests_total{${ns},method="GET",route="/v1/posts",status="200"}`, values: `0+${ok}x90` },
];
/** Request durations: `fast` of `total` requests a minute within 1 s (the default latency threshold). */
const durations = (fast: number, total: number): Series[] => [
  {
    series: `aps_http_request_duration_seconds_bucket{${ns},method="GET",route="/v1/posts",le="1"}`,
    values: `0+${fast}x90`,
  },
  { series: `aps_http_request_duration_seconds_count{${ns},method="GET",route="/v1/posts"}`, values: `0+${total}x90` },
];
const gauge = (name: string, labels: string, values: string): Series => ({
  series: `${name}{${ns},${labels}}`,
  values,
});

/** Each alert of the chart with its cases (evaluated every minute; `at` after the alert's `for`). */
const CASES: Record<string, AlertCase> = {
  APSGatewayDown: {
    firing: [
      {
        input: [{ series: `up{${ns},job="gateway",pod="gw-1"}`, values: "0x10" }],
        at: "5m",
        labels: { namespace: "aps", severity: "critical" },
      },
      // no gateway scraped at all (only another component)
      {
        input: [{ series: `up{${ns},job="forum",pod="forum-1"}`, values: "1x10" }],
        at: "5m",
        labels: { namespace: "aps", job: "gateway", severity: "critical" },
      },
    ],
    healthy: {
      input: [
        { series: `up{${ns},job="gateway",pod="gw-1"}`, values: "1x10" },
        { series: `up{${ns},job="gateway",pod="gw-2"}`, values: "0x10" },
        { series: `up{${other},job="gateway",pod="gw-1"}`, values: "0x10" },
      ],
      at: "5m",
    },
  },
  APSErrorBudgetBurnFast: {
    firing: [{ input: requests(10, 90), at: "80m", labels: { namespace: "aps", severity: "critical" } }],
    healthy: { input: requests(1, 999), at: "80m" },
  },
  APSErrorBudgetBurnSlow: {
    firing: [{ input: requests(10, 90), at: "80m", labels: { namespace: "aps", severity: "warning" } }],
    healthy: { input: requests(1, 999), at: "80m" },
  },
  APSLatencyBudgetBurn: {
    firing: [{ input: durations(80, 100), at: "80m", labels: { namespace: "aps", severity: "warning" } }],
    healthy: { input: durations(999, 1000), at: "80m" },
  },
  APSDatabasePoolSaturated: {
    firing: [
      {
        input: [gauge("aps_db_pool_connections", 'service="forum",state="waiting"', "3x10")],
        at: "8m",
        labels: { namespace: "aps", service: "forum", severity: "warning" },
      },
    ],
    healthy: {
      input: [
        gauge("aps_db_pool_connections", 'service="forum",state="waiting"', "0x10"),
        gauge("aps_db_pool_connections", 'service="forum",state="busy"', "5x10"),
      ],
      at: "8m",
    },
  },
  APSRetentionFailing: {
    firing: [
      {
        input: [gauge("aps_retention_failures_total", 'service="forum",table="vote_history"', "0+1x60")],
        at: "45m",
        labels: { namespace: "aps", service: "forum", table: "vote_history", severity: "warning" },
      },
    ],
    // failures long ago: the counter no longer moves
    healthy: {
      input: [gauge("aps_retention_failures_total", 'service="forum",table="vote_history"', "5x60")],
      at: "45m",
    },
  },
  APSEventsParked: {
    firing: [
      {
        input: [gauge("aps_dead_letter_events", 'durable="knowledge-forum"', "2x10")],
        at: "8m",
        labels: { namespace: "aps", durable: "knowledge-forum", severity: "warning" },
      },
    ],
    healthy: {
      input: [
        gauge("aps_dead_letter_events", 'durable="knowledge-forum"', "0x10"),
        { series: `aps_dead_letter_events{${other},durable="knowledge-forum"}`, values: "2x10" },
      ],
      at: "8m",
    },
  },
  APSConsumerLagHigh: {
    firing: [
      {
        input: [gauge("aps_consumer_pending", 'durable="council-forum"', "5000x20")],
        at: "20m",
        labels: { namespace: "aps", durable: "council-forum", severity: "warning" },
      },
    ],
    healthy: { input: [gauge("aps_consumer_pending", 'durable="council-forum"', "10x20")], at: "20m" },
  },
  APSOutboxBacklog: {
    firing: [
      {
        input: [gauge("aps_outbox_backlog", 'service="forum"', "5000x15")],
        at: "15m",
        labels: { namespace: "aps", service: "forum", severity: "warning" },
      },
    ],
    healthy: { input: [gauge("aps_outbox_backlog", 'service="forum"', "3x15")], at: "15m" },
  },
  APSEventStreamNearFull: {
    firing: [
      {
        input: [
          gauge("aps_event_stream_usage", 'measure="bytes"', "900x20"),
          gauge("aps_event_stream_limit", 'limit="max_bytes"', "1000x20"),
        ],
        at: "20m",
        labels: { namespace: "aps", severity: "warning" },
      },
    ],
    // half full; and a stream without a byte limit (0) is never "near full"
    healthy: {
      input: [
        gauge("aps_event_stream_usage", 'measure="bytes"', "500x20"),
        gauge("aps_event_stream_limit", 'limit="max_bytes"', "1000x20"),
        { series: `aps_event_stream_usage{${other},measure="bytes"}`, values: "900x20" },
        { series: `aps_event_stream_limit{${other},limit="max_bytes"}`, values: "0x20" },
      ],
      at: "20m",
    },
  },
  APSWebhookDeliveryLagHigh: {
    // per minute: 100 deliveries, 90 of them within 1 s and the rest past 60 s (p99 in the 60–300 s bucket)
    firing: [
      {
        input: [
          gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="1"', "0+90x40"),
          gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="60"', "0+90x40"),
          gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="300"', "0+100x40"),
          gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="+Inf"', "0+100x40"),
        ],
        at: "35m",
        labels: { namespace: "aps", severity: "warning" },
      },
    ],
    healthy: {
      input: [
        gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="1"', "0+100x40"),
        gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="60"', "0+100x40"),
        gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="300"', "0+100x40"),
        gauge("aps_webhook_delivery_lag_seconds_bucket", 'le="+Inf"', "0+100x40"),
      ],
      at: "35m",
    },
  },
  APSWorkQueueStale: {
    firing: [
      {
        input: [gauge("aps_work_queue", 'queue="inbox_fanout",measure="oldest_seconds"', "900x15")],
        at: "15m",
        labels: { namespace: "aps", queue: "inbox_fanout", severity: "warning" },
      },
    ],
    healthy: {
      input: [
        gauge("aps_work_queue", 'queue="inbox_fanout",measure="oldest_seconds"', "5x15"),
        gauge("aps_work_queue", 'queue="inbox_fanout",measure="depth"', "5000x15"),
      ],
      at: "15m",
    },
  },
  APSFlagRateHigh: {
    firing: [
      {
        input: [gauge("aps_flags_total", 'reason="spam",counted="true"', "0+5x120")],
        at: "100m",
        labels: { namespace: "aps", severity: "warning" },
      },
    ],
    healthy: { input: [gauge("aps_flags_total", 'reason="spam",counted="true"', "0+1x120")], at: "100m" },
  },
  APSContentHiddenByFlags: {
    firing: [
      {
        input: [gauge("aps_flag_hides_total", 'target="post"', "0+1x30")],
        at: "20m",
        labels: { namespace: "aps", severity: "info" },
      },
    ],
    healthy: { input: [gauge("aps_flag_hides_total", 'target="post"', "0x30")], at: "20m" },
  },
};

describeTools('alert and SLO rules (promtool, docs/observability.md "Alerts and SLOs")', () => {
  let groups: Array<{ name: string; rules: any[] }>;
  let alerts: any[];
  let dir: string;

  beforeAll(async () => {
    if ("skipReason" in tools) return;
    const ms: Manifest[] = await renderChart(tools, [
      "--set",
      "metrics.prometheusRule.enabled=true",
      "--set",
      "metrics.podMonitor.enabled=true",
    ]);
    const rule = ms.find((m) => m.kind === "PrometheusRule");
    if (!rule) throw new Error("no PrometheusRule rendered with metrics.prometheusRule.enabled=true");
    groups = rule.spec.groups;
    alerts = groups.flatMap((g) => g.rules).filter((r) => r.alert);
    dir = mkdtempSync(join(tmpdir(), "aps-alerts-"));
  }, 120_000);
  afterAll(() => (dir ? rmSync(dir, { recursive: true, force: true }) : undefined));

  /**
   * `promtool test rules` of `tests` (promtool's test groups, written to `file`) on the rendered
   * rules without their annotations (text for people; the cases check when an alert fires and with
   * which labels); resolves promtool's exit code and output.
   */
  const promtoolTest = async (file: string, tests: unknown[]): Promise<{ code: number; text: string }> => {
    const bare = groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _a, ...r }) => r) }));
    writeFileSync(join(dir, "bare.yaml"), JSON.stringify({ groups: bare }));
    writeFileSync(join(dir, file), JSON.stringify({ rule_files: ["bare.yaml"], evaluation_interval: "1m", tests }));
    return run(PROMTOOL!, ["test", "rules", file], { cwd: dir }).then(
      (r) => ({ code: 0, text: r.stdout + r.stderr }),
      (err) => ({ code: err.code as number, text: `${err.stdout}${err.stderr}` }),
    );
  };

  it("every alert has a case here, a runbook page and `namespace` in what it groups by", () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual(Object.keys(CASES).sort());
    for (const a of alerts) {
      const page = /\/docs\/runbooks\/([A-Za-z]+\.md)$/.exec(a.annotations?.runbook_url ?? "")?.[1];
      expect({ alert: a.alert, page }).toEqual({ alert: a.alert, page: expect.stringMatching(/\.md$/) });
      const text = readFileSync(join(ROOT, "docs/runbooks", page!), "utf8");
      expect({ alert: a.alert, named: text.includes(a.alert) }).toEqual({ alert: a.alert, named: true });
      expect({ alert: a.alert, severity: a.labels?.severity }).toEqual({
        alert: a.alert,
        severity: expect.stringMatching(/^(critical|warning|info)$/),
      });
    }
  });

  it("`promtool check rules` accepts the rendered groups, annotations included", async () => {
    const file = join(dir, "rules.yaml");
    writeFileSync(file, JSON.stringify({ groups }));
    const { stdout } = await run(PROMTOOL!, ["check", "rules", file]).catch((err) => {
      throw new Error(`promtool check rules failed:\n${err.stdout}${err.stderr}`);
    });
    expect(stdout).toMatch(new RegExp(`SUCCESS: ${groups.flatMap((g) => g.rules).length} rules found`));
  });

  it("`promtool test rules`: each alert fires on its failing series with its labels, and not on healthy ones or another namespace's", async () => {
    const tests = Object.entries(CASES).flatMap(([alertname, c]) => [
      ...c.firing.map((f) => ({
        interval: "1m",
        input_series: f.input,
        alert_rule_test: [{ eval_time: f.at, alertname, exp_alerts: [{ exp_labels: f.labels }] }],
      })),
      {
        interval: "1m",
        input_series: c.healthy.input,
        alert_rule_test: [{ eval_time: c.healthy.at, alertname, exp_alerts: [] }],
      },
    ]);
    expect(await promtoolTest("tests.yaml", tests)).toEqual({ code: 0, text: expect.stringContaining("SUCCESS") });
    console.log(`[alerts] promtool: ${alerts.length} alerts, ${tests.length} test groups passed`);
  });

  it("`promtool test rules`: with no 5xx series at all the error ratio records 0, not nothing (a healthy API's SLO panel has data)", async () => {
    const ok = requests(0, 60).filter((s) => s.series.includes('status="200"'));
    const windows = ["5m", "30m", "1h"];
    const tests = [
      {
        interval: "1m",
        input_series: ok,
        promql_expr_test: windows.map((w) => ({
          expr: `aps:http_error_ratio:rate${w}`,
          eval_time: "80m",
          exp_samples: [{ labels: `aps:http_error_ratio:rate${w}{namespace="aps"}`, value: 0 }],
        })),
      },
    ];
    expect(await promtoolTest("zero-tests.yaml", tests)).toEqual({ code: 0, text: expect.stringContaining("SUCCESS") });
  });
});
