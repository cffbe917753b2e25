import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Logger } from "./log.js";

/**
 * Prometheus metrics of the process (docs/design/operations.md#at-a-glance). One registry per process: in the all-in-one
 * every service shares it, so the gateway's `/metrics` shows them all. Names:
 * - `aps_http_requests_total{method,route,status}`, `aps_http_request_duration_seconds{…}` (gateway)
 * - `aps_grpc_server_handled_total{method,code}`, `aps_grpc_server_handling_seconds{method,code}`
 * - `aps_outbox_backlog{service}` (rows not yet published, sampled on scrape)
 * - `aps_consumer_deliveries_total{durable}`, `aps_consumer_failures_total{durable}`
 * - `aps_consumer_pending{durable}` (JetStream: events not yet delivered + delivered but unacked;
 *   in-process bus: deliveries queued or being handled)
 * - `aps_events_parked_total{durable,kind}` (events this process parked in the dead-letter queue; docs/design/events.md#redelivery)
 * - `aps_event_stream_limit{limit}`, `aps_event_stream_usage{measure}` (the JetStream stream's retention limits and contents, sampled on scrape; docs/design/events.md#stream-retention)
 * - `aps_dead_letter_events{durable}` (events in the dead-letter queue now, sampled on scrape; docs/design/events.md#redelivery)
 * - `aps_search_duration_seconds{engine,kind}` (knowledge: one search in the engine)
 * - `aps_rate_limit_store_failures_total` (gateway: counts answered by the per-process fallback, docs/design/identity-and-abuse.md#per-minute-request-limits)
 * - `aps_gateway_cache_lookups_total{cache,result}` (gateway: `auth`/`read` caches, hit/miss/joined/bypass; docs/design/edge.md)
 * - `aps_event_streams_open`, `aps_event_stream_refusals_total{reason}`, `aps_event_stream_ends_total{reason}`,
 *   `aps_event_feed_reads_total{reader}` (gateway: `GET /v1/events/stream`; docs/design/events.md#event-stream-sse)
 * - `aps_flags_total{reason,counted}`, `aps_flag_hides_total{target}`, `aps_flags_refused_total{cause}` (forum: community flags, docs/design/identity-and-abuse.md#community-flags)
 * - `aps_retention_pruned_rows_total{service,table}`, `aps_retention_failures_total{service,table}` (the retention job, retention.ts; docs/design/operations.md#retention)
 * - `aps_case_projection_waits_total{result}` (gateway: a council write's wait for the forum's projection of its case, `reached`/`late`/`failed`; docs/design/council.md#the-forums-projection-of-the-case)
 * - `aps_work_queue{queue,measure}` (a table-backed work queue: `depth` jobs queued or in progress, `oldest_seconds`
 *   the age of the oldest; sampled on scrape; notifications' `inbox_fanout`, docs/design/notifications.md#paged-inbox-fan-out)
 * - `aps_build_info{version,revision,node}` (always 1: what runs; `revision` from APS_BUILD_REVISION, the image sets it)
 * - `aps_webhook_attempts_total{outcome}`, `aps_webhook_attempt_seconds{outcome}`, `aps_webhook_delivery_lag_seconds`,
 *   `aps_webhook_endpoints_disabled_total` (notifications: webhook attempts, lag to a 2xx, give-ups; docs/design/notifications.md#attempts)
 * - `aps_forwarded_for_untrusted_total{peer}` (gateway: X-Forwarded-For from a peer outside TRUSTED_PROXIES, ignored)
 * - `aps_db_pool_connections{service,state}` (each service's PostgreSQL pool: `total`, `idle`, `busy`, `waiting`
 *   clients queued for a connection, `max`; summed over the process's pools of a service; sampled on scrape)
 * - the prom-client default process metrics (`process_*`, `nodejs_*`).
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequests = new Counter({
  name: "aps_http_requests_total",
  help: "HTTP requests answered by the gateway, by route template and status.",
  labelNames: ["method", "route", "status"] as const,
  registers: [metricsRegistry],
});
export const rateLimitStoreFailures = new Counter({
  name: "aps_rate_limit_store_failures_total",
  help: "Rate-limit counts the shared store failed or timed out on (answered by the per-process fallback).",
  registers: [metricsRegistry],
});
export const gatewayCacheLookups = new Counter({
  name: "aps_gateway_cache_lookups_total",
  help: "Lookups in the gateway's caches: hit, stale (served while refreshed, docs/design/edge.md#cache-invalidation-by-events), miss, joined (waited for a lookup already running) or bypass (not cacheable).",
  labelNames: ["cache", "result"] as const,
  registers: [metricsRegistry],
});
/**
 * Event streams (`GET /v1/events/stream`) refused (gateway, docs/design/events.md#event-stream-sse): `reason`
 * `agent` (429, EVENT_STREAMS_PER_AGENT), `source` (429, EVENT_STREAMS_PER_SOURCE) or `replica`
 * (503, EVENT_STREAMS_PER_REPLICA).
 */
export const eventStreamRefusals = new Counter({
  name: "aps_event_stream_refusals_total",
  help: "Event streams refused: agent (429, EVENT_STREAMS_PER_AGENT), source (429, EVENT_STREAMS_PER_SOURCE) or replica (503, EVENT_STREAMS_PER_REPLICA).",
  labelNames: ["reason"] as const,
  registers: [metricsRegistry],
});
/**
 * Event streams ended (docs/design/events.md#event-stream-sse), by `reason`: `client_closed`, `max_age` (EVENT_STREAM_MAX_AGE_MS),
 * `slow_client` (unsent buffer past EVENT_STREAM_MAX_BUFFER_BYTES), `shutdown`, `upstream_error`.
 */
export const eventStreamEnds = new Counter({
  name: "aps_event_stream_ends_total",
  help: "Event streams ended, by reason: client_closed, max_age, slow_client, shutdown, upstream_error.",
  labelNames: ["reason"] as const,
  registers: [metricsRegistry],
});
/**
 * `ListEvents` calls made for event streams (docs/design/events.md#event-stream-sse), by `reader`: `shared` (the one reader per
 * gateway, at most one every 500 ms while streams are open) or `catch_up` (a stream resuming behind
 * the live end).
 */
export const eventFeedReads = new Counter({
  name: "aps_event_feed_reads_total",
  help: "ListEvents calls made for event streams: shared (one reader per gateway) or catch_up (a stream resuming behind the live end).",
  labelNames: ["reader"] as const,
  registers: [metricsRegistry],
});
/** Something that holds event streams open (a gateway's stream registry), for `aps_event_streams_open`. */
export interface OpenStreamCount {
  readonly size: number;
}
const openStreamSources = new Set<OpenStreamCount>();
/**
 * Counts `source`'s streams in `aps_event_streams_open` (docs/design/events.md#event-stream-sse), and starts
 * `aps_event_stream_refusals_total` at 0 for every reason; returns the unregister.
 */
export function registerOpenStreams(source: OpenStreamCount): () => void {
  zeroSeries(eventStreamRefusals, { reason: ["agent", "source", "replica"] });
  openStreamSources.add(source);
  return () => void openStreamSources.delete(source);
}
new Gauge({
  name: "aps_event_streams_open",
  help: "Event streams (GET /v1/events/stream) open in this process (sampled on scrape).",
  registers: [metricsRegistry],
  collect() {
    let n = 0;
    for (const s of openStreamSources) n += s.size;
    this.set(n);
  },
});
export const httpDuration = new Histogram({
  name: "aps_http_request_duration_seconds",
  help: "HTTP request duration at the gateway, by route template and status.",
  labelNames: ["method", "route", "status"] as const,
  buckets: DURATION_BUCKETS,
  registers: [metricsRegistry],
});
export const grpcHandled = new Counter({
  name: "aps_grpc_server_handled_total",
  help: "gRPC calls handled, by full method and status code.",
  labelNames: ["method", "code"] as const,
  registers: [metricsRegistry],
});
export const grpcDuration = new Histogram({
  name: "aps_grpc_server_handling_seconds",
  help: "gRPC handling duration, by full method and status code.",
  labelNames: ["method", "code"] as const,
  buckets: DURATION_BUCKETS,
  registers: [metricsRegistry],
});
export const consumerDeliveries = new Counter({
  name: "aps_consumer_deliveries_total",
  help: "Events delivered to a durable consumer's handler (redeliveries included).",
  labelNames: ["durable"] as const,
  registers: [metricsRegistry],
});
export const consumerFailures = new Counter({
  name: "aps_consumer_failures_total",
  help: "Deliveries whose handler failed (the event is delivered again or dead-lettered).",
  labelNames: ["durable"] as const,
  registers: [metricsRegistry],
});
/**
 * Community flags stored by this forum process (docs/design/identity-and-abuse.md#community-flags): `reason` (spam,
 * abuse, off-topic, other) and `counted` ("true": it counts toward FLAG_HIDE_THRESHOLD; "false":
 * Sagacity < 1, a penalty, or a flag of the same source counts already). The owner's flag-rate
 * alert (chart `APSFlagRateHigh`, docs/observability.md) reads its rate.
 */
export const caseProjectionWaits = new Counter({
  name: "aps_case_projection_waits_total",
  help: "Council writes that waited for the forum's projection of their case: reached it, answered late (after 2 s) or could not read it.",
  labelNames: ["result"] as const,
  registers: [metricsRegistry],
});
export const flagsTotal = new Counter({
  name: "aps_flags_total",
  help: "Flags stored by the forum, by reason and whether they count toward hiding (one per source).",
  labelNames: ["reason", "counted"] as const,
  registers: [metricsRegistry],
});
/** Posts (`target="post"`) and comments (`"comment"`) hidden by flags, awaiting the owner's review (docs/design/identity-and-abuse.md#community-flags). */
export const flagHides = new Counter({
  name: "aps_flag_hides_total",
  help: "Posts and comments hidden by flags (FLAG_HIDE_THRESHOLD reached), awaiting the owner's review.",
  labelNames: ["target"] as const,
  registers: [metricsRegistry],
});
/** Flags refused and not stored; `cause="budget"`: FLAGS_PER_DAY reached (docs/design/identity-and-abuse.md#community-flags). */
export const flagsRefused = new Counter({
  name: "aps_flags_refused_total",
  help: "Flags refused and not stored, by cause (budget: the agent's FLAGS_PER_DAY was reached).",
  labelNames: ["cause"] as const,
  registers: [metricsRegistry],
});
/** Events a consumer of this process parked in the dead-letter queue (docs/design/events.md#redelivery); `kind` = poison | unknown. */
export const eventsParked = new Counter({
  name: "aps_events_parked_total",
  help: "Events parked in the dead-letter queue by a consumer of this process, by durable and failure kind (poison | unknown).",
  labelNames: ["durable", "kind"] as const,
  registers: [metricsRegistry],
});

/**
 * Starts at 0 the series of `metric` (a counter or a histogram) for every combination of the
 * label values in `labels` (`{ outcome: ["ok", "failed"] }` → two series), so a dashboard or an
 * alert reads 0 rather than "no data" before the first event — Prometheus' advice on missing
 * metrics (docs/observability.md "Dashboards"). Call it where the code that counts runs.
 */
export function zeroSeries<T extends string>(
  metric: Counter<T> | Histogram<T>,
  labels: { [K in T]?: readonly string[] },
): void {
  let sets: Array<Partial<Record<T, string>>> = [{}];
  for (const [name, values] of Object.entries(labels) as Array<[T, readonly string[]]>)
    sets = sets.flatMap((set) => values.map((v) => ({ ...set, [name]: v })));
  for (const set of sets) {
    if (metric instanceof Histogram) metric.zero(set);
    else metric.inc(set, 0);
  }
}

/** Something that can count the events in its dead-letter queue, by durable (a bus). */
export interface DeadLetterCountSource {
  deadLetterCounts(): Promise<Record<string, number>>;
}

const deadLetterSources = new Set<DeadLetterCountSource>();

/** Registers a bus for `aps_dead_letter_events{durable}`; returns the unregister. */
export function registerDeadLetters(source: DeadLetterCountSource): () => void {
  deadLetterSources.add(source);
  return () => void deadLetterSources.delete(source);
}

new Gauge({
  name: "aps_dead_letter_events",
  help: "Events parked in the dead-letter queue and not replayed yet, by the durable consumer that parked them (sampled on scrape).",
  labelNames: ["durable"] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const all = await Promise.all([...deadLetterSources].map((s) => s.deadLetterCounts().catch(() => ({}))));
    for (const byDurable of all) for (const [durable, n] of Object.entries(byDurable)) this.set({ durable }, n);
  },
});

/** Something that knows the event stream's limits and contents (a JetStreamBus). */
export interface StreamSource {
  streamState(): Promise<{
    limits: { maxAgeSeconds: number; maxBytes: number; maxMsgsPerSubject: number };
    bytes: number;
    messages: number;
  }>;
}

const streamSources = new Set<StreamSource>();

/** Registers a bus for `aps_event_stream_limit` / `aps_event_stream_usage`; returns the unregister. */
export function registerStream(source: StreamSource): () => void {
  streamSources.add(source);
  return () => void streamSources.delete(source);
}

/** First registered stream's state, or undefined (every bus of a process uses the same stream). */
async function sampleStream(): Promise<Awaited<ReturnType<StreamSource["streamState"]>> | undefined> {
  for (const s of streamSources) {
    const st = await s.streamState().catch(() => undefined);
    if (st) return st;
  }
  return undefined;
}

new Gauge({
  name: "aps_event_stream_limit",
  help: "Retention limits the JetStream event stream is configured with: max_age_seconds, max_bytes, max_msgs_per_subject (-1 or 0 = none; sampled on scrape).",
  labelNames: ["limit"] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const st = await sampleStream();
    if (!st) return;
    this.set({ limit: "max_age_seconds" }, st.limits.maxAgeSeconds);
    this.set({ limit: "max_bytes" }, st.limits.maxBytes);
    this.set({ limit: "max_msgs_per_subject" }, st.limits.maxMsgsPerSubject);
  },
});

new Gauge({
  name: "aps_event_stream_usage",
  help: "What the JetStream event stream holds now: bytes, messages (sampled on scrape).",
  labelNames: ["measure"] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const st = await sampleStream();
    if (!st) return;
    this.set({ measure: "bytes" }, st.bytes);
    this.set({ measure: "messages" }, st.messages);
  },
});

/**
 * Time one knowledge search spends in its engine (seconds; docs/design/search-and-translation.md#search-engines, docs/design/operations.md#metrics). Labels: `engine`
 * (`postgres` | `embedded` (MiniSearch) | `meilisearch`; docs/design/search-and-translation.md#the-postgresql-engine), `kind` (`search` = /knowledge/search, `similar` = /posts/similar),
 * `outcome` (`ok` | `error`).
 */
export const searchDuration = new Histogram({
  name: "aps_search_duration_seconds",
  help: "Knowledge search latency in the engine, by engine, kind and outcome.",
  labelNames: ["engine", "kind", "outcome"] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

/**
 * Webhook attempts of the notifications worker (docs/design/notifications.md#attempts), by `outcome`: `ok` (a 2xx read to
 * its end), `status` (another status), `timeout` (past WEBHOOK_ATTEMPT_TIMEOUT_MS), `failed` (no
 * answer: refused, reset, a target the SSRF guard refuses), `aborted` (cut by a shutdown, tried again).
 */
export const webhookAttempts = new Counter({
  name: "aps_webhook_attempts_total",
  help: "Webhook delivery attempts, by outcome (ok, status, timeout, failed, aborted).",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

/** Time one webhook attempt took, seconds (connect to the answer's end or the deadline), by `outcome` as above. */
export const webhookAttemptDuration = new Histogram({
  name: "aps_webhook_attempt_seconds",
  help: "Webhook attempt duration, by outcome.",
  labelNames: ["outcome"] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

/**
 * Delivery lag of a webhook delivered by a 2xx, seconds: from when it was due (queued, or its
 * retry's time) to the endpoint's answer — what a subscriber waits (capacity target p99 < 5 s).
 */
export const webhookDeliveryLag = new Histogram({
  name: "aps_webhook_delivery_lag_seconds",
  help: "Time from a webhook delivery being due to its successful answer.",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metricsRegistry],
});

/** Endpoints disabled after their retry schedule ran out (the give-up, docs/design/notifications.md#attempts). */
export const webhookEndpointsDisabled = new Counter({
  name: "aps_webhook_endpoints_disabled_total",
  help: "Webhook endpoints disabled after a delivery exhausted its retries.",
  registers: [metricsRegistry],
});

/**
 * Requests that carried `X-Forwarded-For` from a peer not in TRUSTED_PROXIES (the header was
 * ignored: the peer itself counted as the client), by the peer's range: `loopback` (a proxy on the
 * same host — every client then shares one source), `private`, `public` (docs/reliability.md "Abuse").
 */
export const forwardedUntrusted = new Counter({
  name: "aps_forwarded_for_untrusted_total",
  help: "Requests whose X-Forwarded-For was ignored because the peer is not a trusted proxy, by the peer's range.",
  labelNames: ["peer"] as const,
  registers: [metricsRegistry],
});

/** Something with an outbox backlog (an OutboxRelay). */
export interface BacklogSource {
  backlog(): Promise<number>;
}

const backlogSources = new Map<BacklogSource, string>();

/** Registers a relay for `aps_outbox_backlog{service}`; returns the unregister. */
export function registerBacklog(source: BacklogSource, service: string): () => void {
  backlogSources.set(source, service);
  return () => void backlogSources.delete(source);
}

new Gauge({
  name: "aps_outbox_backlog",
  help: "Outbox rows not yet published, per service (sampled on scrape).",
  labelNames: ["service"] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const totals = new Map<string, number>();
    await Promise.all(
      [...backlogSources].map(async ([src, service]) => {
        const n = await src.backlog().catch(() => undefined);
        if (n !== undefined) totals.set(service, (totals.get(service) ?? 0) + n);
        else if (!totals.has(service)) totals.set(service, 0);
      }),
    );
    for (const [service, n] of totals) this.set({ service }, n);
  },
});

/** Something that knows its consumers' lag (a JetStreamBus or an InProcessBus): pending events by durable. */
export interface LagSource {
  pending(): Promise<Record<string, number>>;
}

const lagSources = new Set<LagSource>();

/** Registers a bus for `aps_consumer_pending{durable}`; returns the unregister. */
export function registerLag(source: LagSource): () => void {
  lagSources.add(source);
  return () => void lagSources.delete(source);
}

new Gauge({
  name: "aps_consumer_pending",
  help: "Consumer lag: events in the stream not yet delivered to the durable, plus delivered but not yet acknowledged (in-process bus: deliveries queued or being handled; sampled on scrape).",
  labelNames: ["durable"] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const all = await Promise.all([...lagSources].map((s) => s.pending().catch(() => ({}))));
    for (const byDurable of all) for (const [durable, n] of Object.entries(byDurable)) this.set({ durable }, n);
  },
});

/** A table-backed queue of background work (e.g. notifications' paged inbox fan-outs, docs/design/notifications.md#paged-inbox-fan-out). */
export interface WorkQueueSource {
  /** Jobs queued or in progress now, and the age of the oldest in seconds (0 when none). */
  queueState(): Promise<{ depth: number; oldestSeconds: number }>;
}

const workQueues = new Map<WorkQueueSource, string>();

/** Registers `source` as work queue `queue` for `aps_work_queue{queue,measure}`; returns the unregister. */
export function registerWorkQueue(source: WorkQueueSource, queue: string): () => void {
  workQueues.set(source, queue);
  return () => void workQueues.delete(source);
}

new Gauge({
  name: "aps_work_queue",
  help: "Table-backed work queues: depth (jobs queued or in progress) and oldest_seconds (age of the oldest job), by queue (sampled on scrape).",
  labelNames: ["queue", "measure"] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    await Promise.all(
      [...workQueues].map(async ([src, queue]) => {
        const st = await src.queueState().catch(() => undefined);
        if (!st) return;
        this.set({ queue, measure: "depth" }, st.depth);
        this.set({ queue, measure: "oldest_seconds" }, st.oldestSeconds);
      }),
    );
  },
});

/** The Prometheus text exposition of every metric of this process. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}

/** A running metrics endpoint. */
export interface MetricsServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * Serves `GET /metrics` on `port` (gRPC services: `METRICS_PORT`); port 0 or unset = off
 * (returns undefined). Binds every interface: Prometheus scrapes from outside the pod.
 */
export async function startMetricsServer(
  port: number,
  log: Logger,
  host = "0.0.0.0",
): Promise<MetricsServer | undefined> {
  if (!Number.isInteger(port) || port <= 0) return undefined;
  const server: Server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    metricsText().then(
      ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, () => resolve()));
  const bound = (server.address() as { port: number }).port;
  log.info({ port: bound }, "metrics endpoint listening");
  return { port: bound, stop: () => new Promise<void>((r) => server.close(() => r())) };
}

/** `METRICS_PORT` of a gRPC service (0 or unset = no metrics endpoint). */
export function metricsPortFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.METRICS_PORT ?? 0);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`METRICS_PORT must be a port number, got ${env.METRICS_PORT}`);
  return n;
}

/** The platform package's version (its package.json), for aps_build_info; `unknown` when it cannot be read. */
function platformVersion(): string {
  try {
    return (createRequire(import.meta.url)("../package.json") as { version?: string }).version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * `aps_build_info{version,revision,node}` = 1: which build serves (docs/observability.md). `version`
 * is the platform package's, `revision` the commit the image was built from (`APS_BUILD_REVISION`,
 * set by deploy/docker/Dockerfile; `unknown` outside an image), `node` the runtime. Read on scrape.
 */
new Gauge({
  name: "aps_build_info",
  help: "Which build serves: version, revision (the commit of the image), node (the runtime); always 1.",
  labelNames: ["version", "revision", "node"] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    this.set(
      { version: platformVersion(), revision: process.env.APS_BUILD_REVISION || "unknown", node: process.version },
      1,
    );
  },
});

/** What `aps_db_pool_connections` reads of a `pg.Pool` (its own counters, and `options.max`). */
export interface PoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options: { max?: number };
}

const pools = new Map<PoolCounts, string>();

/**
 * Registers a service's PostgreSQL pool for `aps_db_pool_connections{service,state}` (openDatabase
 * does, for every pool it opens); returns the unregister (called when the pool ends).
 */
export function registerPool(service: string, pool: PoolCounts): () => void {
  pools.set(pool, service);
  return () => void pools.delete(pool);
}

new Gauge({
  name: "aps_db_pool_connections",
  help: "PostgreSQL pool of each service: total, idle and busy connections, waiting clients queued for one, and the pool's max (sampled on scrape).",
  labelNames: ["service", "state"] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const [pool, service] of pools) {
      this.inc({ service, state: "total" }, pool.totalCount);
      this.inc({ service, state: "idle" }, pool.idleCount);
      this.inc({ service, state: "busy" }, pool.totalCount - pool.idleCount);
      this.inc({ service, state: "waiting" }, pool.waitingCount);
      this.inc({ service, state: "max" }, pool.options.max ?? 10);
    }
  },
});
