import { freePort, httpClient } from "@aps/testkit";
import { availableModes, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Prometheus metrics (docs/design/operations.md#at-a-glance): the gateway's `GET /metrics` (outside `/v1`)
 * answers the text exposition of the process — in the all-in-one every service's series: HTTP
 * RED by route template, gRPC handled/duration by method and code, the outbox backlog per
 * service, consumer deliveries by durable, and (JetStream) consumer lag.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real" || m === "aio-process");

/** The value of the sample `name{labels}` in `text` (label order as exposed), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.lastIndexOf("}"));
    const got = Object.fromEntries([...inner.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

describe.each(modes)("metrics (%s)", (mode) => {
  let sys: System;
  let metricsUrl: string;
  beforeAll(async () => {
    sys = await startSystem(mode, { env: { AGENDA_MIN_SCORE: "1", JOINS_PER_SOURCE_PER_DAY: "10000" } });
    metricsUrl = sys.baseUrl.replace(/\/v1$/, "") + "/metrics";
  });
  afterAll(async () => {
    await sys?.stop();
  });

  async function scrape(): Promise<string> {
    const r = await fetch(metricsUrl);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return r.text();
  }

  it("counts requests by route template and status, and times them", async () => {
    const labels = { method: "GET", route: "/v1/skill-version", status: "200" };
    const before = sample(await scrape(), "aps_http_requests_total", labels) ?? 0;
    const req = httpClient(sys.baseUrl);
    expect((await req("GET", "/skill-version")).status).toBe(200);
    expect((await req("GET", "/skill-version")).status).toBe(200);
    const text = await scrape();
    expect(sample(text, "aps_http_requests_total", labels)).toBe(before + 2);
    expect(sample(text, "aps_http_request_duration_seconds_count", labels)).toBe(before + 2);
    expect(text).toMatch(/^# TYPE aps_http_request_duration_seconds histogram$/m);
    // Raw paths never become labels.
    const author = await req("POST", "/join", { body: { name: "metrics author" } });
    const post = await req("POST", "/posts", {
      key: author.body.apiKey,
      body: { title: "Metrics", body: "Counted.", is_arch_design: true },
    });
    expect(post.status).toBe(201);
    await req("GET", `/posts/${post.body.id}`, { key: author.body.apiKey });
    const after = await scrape();
    expect(after).not.toContain(post.body.id);
    expect(sample(after, "aps_http_requests_total", { method: "GET", route: "/v1/posts/:id" })).toBeGreaterThan(0);
    // anonymous reads of one URL: the first through the route, the next ones from the read cache
    // before express (docs/design/edge.md#read-cache-shortcut), each counted under the route's template
    const read = { method: "GET", route: "/v1/posts/:id", status: "200" };
    const readsBefore = sample(after, "aps_http_requests_total", read) ?? 0;
    for (let i = 0; i < 3; i++) expect((await req("GET", `/posts/${post.body.id}`)).status).toBe(200);
    const afterReads = await scrape();
    expect(sample(afterReads, "aps_http_requests_total", read)).toBe(readsBefore + 3);
    expect(sample(afterReads, "aps_http_request_duration_seconds_count", read)).toBe(readsBefore + 3);
  });

  it("exposes gRPC, outbox backlog and consumer series of every service", async () => {
    const req = httpClient(sys.baseUrl);
    const author = await req("POST", "/join", { body: { name: "backlog author" } });
    const voter = await req("POST", "/join", { body: { name: "backlog voter" } });
    const post = await req("POST", "/posts", {
      key: author.body.apiKey,
      body: { title: "Backlog", body: "Events.", is_arch_design: true },
    });
    expect(
      (await req("POST", `/posts/${post.body.id}/vote`, { key: voter.body.apiKey, body: { vote: 1 } })).status,
    ).toBeLessThan(300);
    let text = "";
    await waitStrictly(
      "a delivery to council-agenda in /metrics",
      async () =>
        (sample((text = await scrape()), "aps_consumer_deliveries_total", { durable: "council-agenda" }) ?? 0) > 0,
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(text).toMatch(/^# TYPE aps_outbox_backlog gauge$/m);
    for (const service of ["identity", "forum", "council"])
      expect(sample(text, "aps_outbox_backlog", { service })).toBeGreaterThanOrEqual(0);
    expect(
      sample(text, "aps_grpc_server_handled_total", { method: "/aps.forum.v1.ForumService/CastVote", code: "0" }),
    ).toBeGreaterThan(0);
    expect(
      sample(text, "aps_grpc_server_handling_seconds_count", {
        method: "/aps.forum.v1.ForumService/CastVote",
        code: "0",
      }),
    ).toBeGreaterThan(0);
    expect(sample(text, "aps_consumer_deliveries_total", { durable: "council-agenda" })).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE aps_consumer_failures_total counter$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^# TYPE aps_consumer_pending gauge$/m);
    {
      // Both buses report their consumers' lag (the in-process bus: deliveries queued or being
      // handled). On JetStream a durable on several subjects runs as one consumer per subject,
      // named `<durable>__<subject key>` (the council-agenda takes post_on_agenda and post_withdrawn).
      const lags = [...text.matchAll(/^aps_consumer_pending\{durable="council-agenda(?:__[^"]*)?"\} (\d+)$/gm)];
      expect(lags.length).toBeGreaterThan(0);
      for (const m of lags) expect(Number(m[1])).toBeGreaterThanOrEqual(0);
    }
  });

  it("exposes the search latency of the knowledge engine (the all-in-one's PostgreSQL index, docs/design/search-and-translation.md#the-postgresql-engine), by kind", async () => {
    const req = httpClient(sys.baseUrl);
    const labels = { engine: "postgres", kind: "search", outcome: "ok" };
    const before = sample(await scrape(), "aps_search_duration_seconds_count", labels) ?? 0;
    expect((await req("GET", "/knowledge/search?q=council&limit=3")).status).toBe(200);
    expect((await req("GET", "/knowledge/search?q=proposal")).status).toBe(200);
    const text = await scrape();
    expect(text).toMatch(/^# TYPE aps_search_duration_seconds histogram$/m);
    expect(sample(text, "aps_search_duration_seconds_count", labels)).toBe(before + 2);
  });
});

describe.each(modes.filter((m) => m === "embedded"))("metrics on a separate port (%s, METRICS_PORT)", (mode) => {
  let sys: System;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    sys = await startSystem(mode, { env: { METRICS_PORT: String(metricsPort) } });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("serves /metrics on METRICS_PORT only: the public port (and so the Ingress) answers 404", async () => {
    const onPublic = await fetch(sys.baseUrl.replace(/\/v1$/, "") + "/metrics");
    expect(onPublic.status).toBe(404);
    const onMetrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(onMetrics.status).toBe(200);
    expect(await onMetrics.text()).toMatch(/^# TYPE aps_http_requests_total counter$/m);
  });
});
