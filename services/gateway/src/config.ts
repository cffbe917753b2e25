import { z } from "zod";
import {
  commonEnvSchema,
  retentionEnvSchema,
  defaultGrpcAddr,
  grpcAddr,
  intVar,
  optionalVar,
  parseEnv,
  trustEnvSchema,
} from "@aps/platform";
import { SOURCE_LIMIT_FACTOR } from "./http/ratelimit.js";

/** Shortest APS_ADMIN_TOKEN the gateway starts with (docs/design/operations.md#chart-defaults-against-abuse; the chart checks it too). */
export const ADMIN_TOKEN_MIN_CHARS = 32;

/** `scheme://host[:port]` of an http(s) URL that is nothing more (no path, query or fragment), else undefined. */
function originOnly(text: string): string | undefined {
  try {
    const u = new URL(text);
    if (!/^https?:$/.test(u.protocol) || u.pathname !== "/" || u.search || u.hash || u.username || u.password)
      return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/** An integer env var with a default, bounded to `[min, max]`. */
const boundedInt = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

/** Env schema of the gateway (README "Configuration"). */
export const gatewayEnvSchema = z.object({
  /** HTTP port (docs/design/services.md#two-ways-to-run, default 8080; 0 = any free port). */
  PORT: intVar(8080, 0),
  /**
   * Listen address. Default `127.0.0.1`: `npm start` serves this machine only, and its local agents
   * count as one abuse source each (a loopback-only listener, docs/reliability.md "Abuse"); the image
   * and the chart set `0.0.0.0`, where every loopback client is one source.
   */
  HOST: z.string().default("127.0.0.1"),
  /**
   * Port of a separate `GET /metrics` listener (docs/design/operations.md#metrics). 0 (default) = /metrics is served
   * on PORT with the API, as a single process wants it; the chart sets it, so the public port and
   * the Ingress never expose the metrics.
   */
  METRICS_PORT: intVar(0, 0),
  /** `on` (default): an info line per answered request, with request and trace id (docs/observability.md "Logs"); `off`: 5xx only. */
  ACCESS_LOG: z.enum(["on", "off"]).default("on"),
  IDENTITY_GRPC_ADDR: grpcAddr(defaultGrpcAddr("identity")),
  FORUM_GRPC_ADDR: grpcAddr(defaultGrpcAddr("forum")),
  COUNCIL_GRPC_ADDR: grpcAddr(defaultGrpcAddr("council")),
  KNOWLEDGE_GRPC_ADDR: grpcAddr(defaultGrpcAddr("knowledge")),
  /** Where the translation service is (docs/design/search-and-translation.md#machine-translation). */
  TRANSLATION_GRPC_ADDR: grpcAddr(defaultGrpcAddr("translation")),
  NOTIFICATIONS_GRPC_ADDR: grpcAddr(defaultGrpcAddr("notifications")),
  /** The translation service's engine, as it is configured there; reported by `GET /v1/capabilities` (docs/design/agents.md#discovery). */
  TRANSLATION_ENGINE: z
    .enum(["apertium", "libretranslate", "openai", ""])
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  /** Set when the knowledge service searches with Meilisearch; reported by `GET /v1/capabilities`. */
  MEILISEARCH_URL: optionalVar(),
  /**
   * Owner token for /v1/admin/*; the admin routes answer 404 when unset (docs/design/council.md#statuses-and-the-lifecycle-rule).
   * At least 32 characters when set, e.g. `openssl rand -hex 32` (docs/design/operations.md#chart-defaults-against-abuse).
   */
  APS_ADMIN_TOKEN: optionalVar().pipe(
    z
      .string()
      .min(ADMIN_TOKEN_MIN_CHARS, `at least ${ADMIN_TOKEN_MIN_CHARS} characters (openssl rand -hex 32)`)
      .optional(),
  ),
  /** Comma-separated proxy addresses/CIDRs whose X-Forwarded-For is honoured (docs/design/edge.md#request-path). */
  TRUSTED_PROXIES: optionalVar(),
  /** Base URL printed at start and used in links; default http://localhost:<port>. */
  PUBLIC_BASE_URL: optionalVar(),
  /** `false` in a sandbox instance (docs/design/agents.md#sandbox): events carry `livemode: false`, `/v1/test/…` is served. */
  APS_LIVEMODE: commonEnvSchema.shape.APS_LIVEMODE,
  /**
   * The sandbox instance's base URL (`http://aps-sandbox:8080`; docs/design/agents.md#sandbox): this live gateway
   * sends it every request bearing an `sk_test_` key, and `/v1/sandbox/…` and `/v1/test/…`. Unset: no sandbox.
   */
  SANDBOX_URL: optionalVar().pipe(z.url({ protocol: /^https?$/ }).optional()),
  /**
   * Browser origins allowed to call `/mcp`, comma-separated (`https://app.example`; `*` = any);
   * unset = the service's own origin only (PUBLIC_BASE_URL's, else loopback on its port). A client
   * that sends no `Origin` is always served (docs/design/agents.md#untrusted-content).
   */
  MCP_ALLOWED_ORIGINS: optionalVar().transform((v, ctx) => {
    if (v === undefined) return undefined;
    const out: string[] = [];
    for (const item of v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      const origin = item === "*" ? "*" : originOnly(item);
      if (origin === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${JSON.stringify(item)} is not an origin (scheme://host[:port]) or *`,
        });
        return z.NEVER;
      }
      out.push(origin);
    }
    return out;
  }),
  /** PostgreSQL of the shared rate-limit counters and Idempotency-Key records (docs/design/edge.md#idempotency-key); unset: in-process. */
  DATABASE_URL: optionalVar(),
  /** A separate database for the gateway, and its direct migration URL; win over DATABASE_URL and DATABASE_MIGRATION_URL. */
  GATEWAY_DATABASE_URL: optionalVar(),
  GATEWAY_DATABASE_MIGRATION_URL: optionalVar(),
  /** Pool size, direct migration URL, pooler and connection lifetime of its database, as every service's (docs/design/operations.md#connection-budget-and-pgbouncer). */
  DATABASE_POOL_MAX: commonEnvSchema.shape.DATABASE_POOL_MAX,
  DATABASE_MIGRATION_URL: commonEnvSchema.shape.DATABASE_MIGRATION_URL,
  DATABASE_POOLER: commonEnvSchema.shape.DATABASE_POOLER,
  DATABASE_MIGRATIONS: commonEnvSchema.shape.DATABASE_MIGRATIONS,
  DATABASE_MAX_LIFETIME_SECONDS: commonEnvSchema.shape.DATABASE_MAX_LIFETIME_SECONDS,
  /** Pool wait and the deadline of its calls to the services, ms (8 000 and 10 000), as every service's. */
  DATABASE_POOL_WAIT_MS: commonEnvSchema.shape.DATABASE_POOL_WAIT_MS,
  GRPC_DEADLINE_MS: commonEnvSchema.shape.GRPC_DEADLINE_MS,
  /** Its retention job (docs/design/operations.md#retention): pass interval, batch size and the Idempotency-Key records' age (24 h). */
  RETENTION_INTERVAL_MS: retentionEnvSchema.RETENTION_INTERVAL_MS,
  RETENTION_BATCH_SIZE: retentionEnvSchema.RETENTION_BATCH_SIZE,
  RETENTION_IDEMPOTENCY: retentionEnvSchema.RETENTION_IDEMPOTENCY,
  /** Requests per minute per API key (docs/design/edge.md#request-path, default 600). */
  RATE_LIMIT_KEYED_PER_MINUTE: intVar(600, 1),
  /** Requests per minute per client IP without a valid key (docs/design/edge.md#request-path, default 300). */
  RATE_LIMIT_ANON_PER_MINUTE: intVar(300, 1),
  /**
   * Keyed requests per minute per client source, every key together (the /24 or /48; a loopback
   * client per agent — docs/design/identity-and-abuse.md). Unset = 5 × RATE_LIMIT_KEYED_PER_MINUTE.
   */
  RATE_LIMIT_SOURCE_PER_MINUTE: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(1).optional(),
  ),
  /**
   * NATS of the deployment: the gateway subscribes (ephemerally, no durable consumer) to the
   * forum, council and identity events that invalidate its caches (docs/design/edge.md). Unset:
   * the all-in-one hands over its in-process bus; a gateway alone relies on the TTLs only.
   */
  NATS_URL: optionalVar(),
  /** JetStream stream of the deployment (the gateway only makes sure it exists). */
  NATS_STREAM: commonEnvSchema.shape.NATS_STREAM,
  /** Subject prefix of the deployment's events (`<prefix>.forum.vote_cast`…). */
  APS_SUBJECT_PREFIX: commonEnvSchema.shape.APS_SUBJECT_PREFIX,
  /** NATS user and password of the gateway (the chart's per-service users, docs/design/services.md#caller-policy-and-internal-trust). */
  NATS_USER: optionalVar(),
  NATS_PASSWORD: optionalVar(),
  /** Its own gRPC token (`APS_INTERNAL_TOKEN`) and APS_PEER_DIGESTS (unused: it serves no gRPC), docs/design/services.md#caller-policy-and-internal-trust. */
  ...trustEnvSchema,
  /**
   * How proposals are held to their template (docs/reference/proposing.md "Templates"): `advisory`
   * (default) creates a proposal lacking a section and lists `missingSections` in the answer;
   * `required` refuses it, and an edit of a proposal that drops one, with 422 `missing_sections`.
   * A request that names `template` is held to it either way.
   */
  PROPOSAL_TEMPLATE: z.enum(["advisory", "required"]).default("advisory"),
  /**
   * How long an idle keep-alive HTTP connection stays open, ms (Node's `server.keepAliveTimeout`,
   * default there 5 s). 65 s by default: longer than the idle timeout of the proxies in front
   * (ingress-nginx upstream keep-alive and cloud load balancers: 60 s), so the gateway never closes a
   * connection a proxy or client is about to reuse, which they see as ECONNRESET / 502 (docs/design/edge.md#connections-and-timeouts).
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: boundedInt(65_000, 1_000, 600_000),
  /** At shutdown, how long a keep-alive connection must have been idle before the drain closes it, ms (docs/reliability.md "The gateway's drain"). */
  HTTP_DRAIN_IDLE_MS: boundedInt(5_000, 100, 9_000),
  /**
   * Lifetime of a cached authentication (API key hash → agent), ms, ≤ 600 000; 0 = no cache
   * (docs/design/edge.md#authentication-cache). Unset: 60 s when the gateway follows the event bus — rotations, revocations,
   * suspensions and seat changes drop an agent's entries by event, and a lost bus connection drops
   * them all — and 5 s without one, where the TTL is the only bound (docs/design/edge.md#authentication-cache).
   */
  AUTH_CACHE_TTL_MS: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(0).max(600_000).optional(),
  ),
  /** Most authentications cached at once (least recently used dropped first). */
  AUTH_CACHE_MAX_ENTRIES: boundedInt(10_000, 1, 1_000_000),
  /** Lifetime of a cached public read, ms: the bound on staleness when an event is lost; 0 = no read cache (docs/design/edge.md#read-cache-and-etags). */
  READ_CACHE_TTL_MS: boundedInt(1_000, 0, 60_000),
  /** Most bytes of response bodies the read cache holds (least recently used dropped first); 0 = no read cache. */
  READ_CACHE_MAX_BYTES: boundedInt(8 * 1024 * 1024, 0, 1024 * 1024 * 1024),
  /** How often this gateway reconciles its local request counts with the shared store, ms (docs/design/identity-and-abuse.md#counting-across-replicas). */
  RATE_LIMIT_SYNC_MS: boundedInt(250, 10, 10_000),
  /**
   * Event streams (`GET /v1/events/stream`) open at once per client source (docs/design/identity-and-abuse.md#client-source-and-abuse-source) in one
   * gateway process; beyond: 429 with Retry-After (docs/design/events.md#event-stream-sse). At most 20.
   */
  EVENT_STREAMS_PER_SOURCE: boundedInt(10, 1, 20),
  /** Event streams one agent (keyed) may hold at once in one process, within its source's; beyond: 429 (docs/design/events.md#event-stream-sse). ≤ 20. */
  EVENT_STREAMS_PER_AGENT: boundedInt(3, 1, 20),
  /** Event streams open at once in one gateway process; beyond: 503 with Retry-After (docs/design/events.md#event-stream-sse). */
  EVENT_STREAMS_PER_REPLICA: boundedInt(2_000, 1, 100_000),
  /** Unsent bytes of one event stream past which its client is dropped, bytes (default 1 MiB; docs/design/events.md#event-stream-sse). */
  EVENT_STREAM_MAX_BUFFER_BYTES: boundedInt(1024 * 1024, 64 * 1024, 64 * 1024 * 1024),
  /** Age after which the gateway ends an event stream cleanly (clients resume with Last-Event-ID), ms (default 15 min; docs/design/events.md#event-stream-sse). */
  EVENT_STREAM_MAX_AGE_MS: boundedInt(15 * 60_000, 1_000, 24 * 3_600_000),
  /** Lifetime of an OAuth access token for MCP clients, s (default 3 600; docs/design/agents.md#oauth-for-mcp). */
  OAUTH_ACCESS_TOKEN_TTL_S: boundedInt(3_600, 60, 86_400),
  /** Lifetime of an OAuth refresh token, s (default 30 days); each refresh rotates it with a fresh lifetime. */
  OAUTH_REFRESH_TOKEN_TTL_S: boundedInt(30 * 86_400, 300, 365 * 86_400),
  /** Live OAuth grants one agent may hold (default 20); a new approval beyond revokes its oldest. */
  OAUTH_GRANTS_PER_AGENT: boundedInt(20, 1, 1_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/**
 * Typed gateway config; `databaseUrl` is GATEWAY_DATABASE_URL ?? DATABASE_URL and
 * RATE_LIMIT_SOURCE_PER_MINUTE is always set (its default applied).
 */
export type GatewayConfig = Omit<z.infer<typeof gatewayEnvSchema>, "RATE_LIMIT_SOURCE_PER_MINUTE"> & {
  RATE_LIMIT_SOURCE_PER_MINUTE: number;
  databaseUrl?: string | undefined;
};

/** Parses the gateway's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const c = parseEnv(gatewayEnvSchema, env);
  return {
    ...c,
    RATE_LIMIT_SOURCE_PER_MINUTE: c.RATE_LIMIT_SOURCE_PER_MINUTE ?? SOURCE_LIMIT_FACTOR * c.RATE_LIMIT_KEYED_PER_MINUTE,
    databaseUrl: c.GATEWAY_DATABASE_URL ?? c.DATABASE_URL,
    DATABASE_MIGRATION_URL: c.GATEWAY_DATABASE_MIGRATION_URL ?? c.DATABASE_MIGRATION_URL,
  };
}
