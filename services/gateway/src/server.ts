import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  JetStreamBus,
  natsConnectionOf,
  migrate,
  openDatabase,
  databaseOptionsOf,
  startMetricsServer,
  type Database,
  type EventBus,
  type LocalEndpoint,
  type Logger,
  type Subscription,
  internalTrustOf,
  GATEWAY,
  RetentionJob,
  releaseListenPort,
  drainHttpServer,
  trackConnections,
  type TrackedConnections,
  serviceClient,
  isTestClock,
  type Clock,
} from "@aps/platform";
import { MemoryIdempotencyStore, PgIdempotencyStore } from "./http/idempotency-store.js";
import {
  council as councilProto,
  forum as forumProto,
  identity as identityProto,
  knowledge as knowledgeProto,
  translation as translationProto,
  notifications as notificationsProto,
} from "@aps/proto";
import { RequestRateLimiter } from "./http/ratelimit.js";
import { OAUTH_RETENTION, OAuthStore } from "./oauth/store.js";
import { createHttp } from "./app.js";
import { SseStreams } from "./http/sse.js";
import type { GatewayConfig } from "./config.js";
import { loadSkill } from "./skill.js";
import { answerClientError } from "./http/client-error.js";
import { mcpOrigins } from "./mcp/route.js";
import { isLoopbackOnly } from "@aps/api/http/client-source";
import {
  AUTH_TTL_FOLLOWING_EVENTS_MS,
  AUTH_TTL_WITHOUT_EVENTS_MS,
  AuthCache,
  keyResolverOf,
} from "./cache/auth-cache.js";
import { ReadCache } from "./cache/read-cache.js";
import { subscribeInvalidation } from "./cache/invalidation.js";

/** Largest request head (request line + headers) the gateway accepts, bytes. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The gateway's own migrations (the shared rate-limit counters, the HTTP Idempotency-Key records). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/** Schema of the gateway's tables in a shared database (docs/design/services.md#one-schema-per-service). */
export const GATEWAY_SCHEMA = "gateway";

/**
 * Deadlines of the translation calls that may generate (an engine at work), ms: 28 s, below the
 * gateway's 30 s request timeout; its other calls keep `GRPC_DEADLINE_MS`.
 */
export const TRANSLATION_DEADLINES_MS = {
  translatePost: 28_000,
  translateTitles: 28_000,
  translateDocument: 28_000,
} as const;

/** A running gateway. */
export interface GatewayHandle {
  /** `http://<host>:<port>/v1`, printed at start. */
  baseUrl: string;
  port: number;
  /** Port of the separate `/metrics` listener (METRICS_PORT), undefined when /metrics is on `port`. */
  metricsPort: number | undefined;
  /**
   * Graceful stop (SIGTERM): stops accepting connections, answers the requests in flight (and
   * any arriving on open keep-alive connections, with `Connection: close`) for up to 10 s, then
   * cuts what is left and closes the gRPC channels. The services are stopped only after this.
   */
  stop(): Promise<void>;
}

/** What the embedding process may hand over to the gateway. */
export interface GatewayOptions {
  /**
   * The event bus of the all-in-one (its in-process bus), used for cache invalidation when
   * NATS_URL is unset. With NATS_URL the gateway opens its own NATS connection instead.
   */
  bus?: EventBus;
  /** In-process endpoints of the services (the all-in-one, docs/design/services.md#in-process-transport). */
  local?: LocalServices;
  /**
   * The all-in-one's database (embedded, or its DATABASE_URL): used for the gateway's schema when
   * the config names none, for the OAuth grants only (docs/design/agents.md#oauth-for-mcp) — the
   * rate-limit counters and Idempotency-Key records stay in the process, as before.
   */
  databaseUrl?: string | undefined;
  /** The instance's clock: a sandbox's test clock serves `/v1/test/clock` (docs/design/agents.md#sandbox); others are ignored. */
  clock?: Clock | undefined;
}

/**
 * In-process endpoints of the services, used instead of their gRPC addresses when the gateway runs
 * in the all-in-one (docs/design/services.md#in-process-transport). Each one is optional.
 */
export interface LocalServices {
  identity?: LocalEndpoint<typeof identityProto.IdentityServiceDefinition>;
  forum?: LocalEndpoint<typeof forumProto.ForumServiceDefinition>;
  council?: LocalEndpoint<typeof councilProto.CouncilServiceDefinition>;
  knowledge?: LocalEndpoint<typeof knowledgeProto.KnowledgeServiceDefinition>;
  translation?: LocalEndpoint<typeof translationProto.TranslationServiceDefinition>;
  notifications?: LocalEndpoint<typeof notificationsProto.NotificationsServiceDefinition>;
}

/**
 * Starts the HTTP gateway from its config; resolves once it is listening. With a database URL
 * (GATEWAY_DATABASE_URL or DATABASE_URL) it migrates the `gateway` schema and keeps the
 * per-minute rate-limit counters there, shared by every replica and reconciled in batches
 * (docs/design/identity-and-abuse.md#counting-across-replicas); without one the counters live in this process (the embedded all-in-one runs
 * exactly one gateway — docs/design/identity-and-abuse.md#per-minute-request-limits). Authentications and public reads are cached (docs/design/edge.md#authentication-cache,
 * docs/design/edge.md#read-cache-and-etags) and invalidated by events from NATS (NATS_URL), from `opts.bus`, or — with neither — by
 * their TTLs only. Throws when the database or NATS is configured but unreachable at start.
 * A service given in `opts.local` is called in-process; the others over gRPC at their `*_GRPC_ADDR`.
 */
export async function startGateway(cfg: GatewayConfig, log: Logger, opts: GatewayOptions = {}): Promise<GatewayHandle> {
  const local = opts.local ?? {};
  // Who the gateway is on gRPC (docs/design/services.md#caller-policy-and-internal-trust): its token goes with every call over the network.
  const { caller } = internalTrustOf(GATEWAY.name, cfg);
  let db: Database | undefined;
  // Its own database (GATEWAY_DATABASE_URL or DATABASE_URL) keeps everything shared; the
  // all-in-one's, handed over when the config names none, keeps the OAuth grants only.
  const dbUrl = cfg.databaseUrl ?? opts.databaseUrl;
  if (dbUrl) {
    db = await openDatabase({
      url: dbUrl,
      schema: GATEWAY_SCHEMA,
      log,
      ...databaseOptionsOf(cfg),
      // on the all-in-one's (embedded) server: few connections, closed when idle, like its services' (docs/design/services.md#embedded-postgresql)
      ...(cfg.databaseUrl ? {} : { poolSize: 2, idleTimeoutMs: 2_000 }),
    });
    await migrate(db, MIGRATIONS_DIR, log);
  }
  const shared = cfg.databaseUrl ? db : undefined;
  // OAuth 2.1 for MCP (docs/design/agents.md#oauth-for-mcp): grants and tokens in the gateway schema, shared by the replicas.
  const oauth = db
    ? new OAuthStore(db.pool, {
        accessTtlS: cfg.OAUTH_ACCESS_TOKEN_TTL_S,
        refreshTtlS: cfg.OAUTH_REFRESH_TOKEN_TTL_S,
        grantsPerAgent: cfg.OAUTH_GRANTS_PER_AGENT,
      })
    : undefined;
  // HTTP Idempotency-Key records (docs/design/edge.md#idempotency-key): shared by the replicas in the gateway schema,
  // pruned after RETENTION_IDEMPOTENCY like every service's idempotency records (docs/design/operations.md#retention).
  const idempotencyRecords = shared ? new PgIdempotencyStore(shared.pool) : new MemoryIdempotencyStore();
  const retention = db
    ? new RetentionJob(
        db.pool,
        [
          ...(shared
            ? [{ table: "idempotency_keys", column: "created_at", olderThanMs: cfg.RETENTION_IDEMPOTENCY }]
            : []),
          ...OAUTH_RETENTION,
        ],
        log,
        { intervalMs: cfg.RETENTION_INTERVAL_MS, batchSize: cfg.RETENTION_BATCH_SIZE, service: GATEWAY_SCHEMA },
      )
    : undefined;
  retention?.start();
  const limits = {
    keyedPerMinute: cfg.RATE_LIMIT_KEYED_PER_MINUTE,
    anonPerMinute: cfg.RATE_LIMIT_ANON_PER_MINUTE,
    sourcePerMinute: cfg.RATE_LIMIT_SOURCE_PER_MINUTE,
  };
  const rateLimiter = new RequestRateLimiter(
    limits,
    shared ? { kind: "postgres", pool: shared.pool, schema: shared.schema, pooler: shared.pooler } : { kind: "memory" },
    log,
    { syncMs: cfg.RATE_LIMIT_SYNC_MS },
  );
  // it only subscribes: no stream settings, an existing stream is left as it is
  const ownBus = cfg.NATS_URL ? await JetStreamBus.connect(natsConnectionOf("gateway", cfg, log)) : undefined;
  const bus = ownBus ?? opts.bus;
  /** How every client of this gateway calls: as `gateway`, with the process's deadline (docs/design/services.md#typed-clients). */
  const calls = { caller, deadlineMs: cfg.GRPC_DEADLINE_MS };
  const identity = serviceClient(
    identityProto.IdentityServiceDefinition,
    local.identity ?? cfg.IDENTITY_GRPC_ADDR,
    calls,
  );
  const authTtlMs = cfg.AUTH_CACHE_TTL_MS ?? (bus ? AUTH_TTL_FOLLOWING_EVENTS_MS : AUTH_TTL_WITHOUT_EVENTS_MS);
  const authCache = new AuthCache(keyResolverOf(identity), {
    ttlMs: authTtlMs,
    maxEntries: cfg.AUTH_CACHE_MAX_ENTRIES,
  });
  const readCache = new ReadCache({ ttlMs: cfg.READ_CACHE_TTL_MS, maxBytes: cfg.READ_CACHE_MAX_BYTES });
  let invalidation: Subscription | undefined;
  if (bus) invalidation = await subscribeInvalidation(bus, readCache, authCache, log, oauth);
  else
    log.info(
      { authTtlMs, readTtlMs: cfg.READ_CACHE_TTL_MS },
      "no event bus: cached authentications and reads expire by their TTLs only",
    );
  const forum = serviceClient(forumProto.ForumServiceDefinition, local.forum ?? cfg.FORUM_GRPC_ADDR, calls);
  const council = serviceClient(councilProto.CouncilServiceDefinition, local.council ?? cfg.COUNCIL_GRPC_ADDR, calls);
  const knowledge = serviceClient(
    knowledgeProto.KnowledgeServiceDefinition,
    local.knowledge ?? cfg.KNOWLEDGE_GRPC_ADDR,
    calls,
  );
  const translation = serviceClient(
    translationProto.TranslationServiceDefinition,
    local.translation ?? cfg.TRANSLATION_GRPC_ADDR,
    { ...calls, methodDeadlinesMs: TRANSLATION_DEADLINES_MS },
  );
  const notifications = serviceClient(
    notificationsProto.NotificationsServiceDefinition,
    local.notifications ?? cfg.NOTIFICATIONS_GRPC_ADDR,
    calls,
  );
  const sseStreams = new SseStreams(
    {
      perSource: cfg.EVENT_STREAMS_PER_SOURCE,
      perAgent: cfg.EVENT_STREAMS_PER_AGENT,
      perReplica: cfg.EVENT_STREAMS_PER_REPLICA,
      maxBufferBytes: cfg.EVENT_STREAM_MAX_BUFFER_BYTES,
      maxAgeMs: cfg.EVENT_STREAM_MAX_AGE_MS,
    },
    log,
  );
  const { listener } = createHttp({
    identity,
    forum,
    council,
    knowledge,
    translation,
    notifications,
    sseStreams,
    skill: loadSkill(),
    log,
    rateLimiter,
    authCache,
    readCache,
    idempotencyRecords,
    oauth,
    adminToken: cfg.APS_ADMIN_TOKEN,
    mcpOrigins: mcpOrigins(cfg.MCP_ALLOWED_ORIGINS, cfg.PUBLIC_BASE_URL),
    publicBaseUrl: cfg.PUBLIC_BASE_URL,
    livemode: cfg.APS_LIVEMODE,
    testClock: isTestClock(opts.clock) ? opts.clock : undefined,
    sandboxUrl: cfg.SANDBOX_URL,
    capabilities: {
      translationEngine: cfg.TRANSLATION_ENGINE,
      searchEngine: cfg.MEILISEARCH_URL ? "meilisearch" : "embedded",
      proposalTemplate: cfg.PROPOSAL_TEMPLATE,
    },
    metricsOnApiPort: cfg.METRICS_PORT === 0,
    accessLog: cfg.ACCESS_LOG === "on",
    deadLetters: bus?.deadLetters,
    trustedProxies:
      cfg.TRUSTED_PROXIES?.split(",")
        .map((s) => s.trim())
        .filter(Boolean) ?? [],
    loopbackPerAgent: isLoopbackOnly(cfg.HOST),
  });
  let draining = false;
  let connections: TrackedConnections | undefined;
  await releaseListenPort(`${cfg.HOST}:${cfg.PORT}`); // held since the process started (docs/design/services.md#port-reservation)
  const listening: Promise<Server> = new Promise((resolve, reject) => {
    // Request heads are capped at 16 KiB: beyond, 431 problem+json (http/client-error.ts).
    // While draining (stop), every answer carries `Connection: close`, so a keep-alive client
    // cannot hold the server open with new requests on an old connection.
    const s = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
      if (draining) res.setHeader("Connection", "close");
      listener(req, res);
    });
    s.on("clientError", answerClientError);
    connections = trackConnections(s); // each connection's idle time, for the drain
    s.once("error", reject);
    s.listen(cfg.PORT, cfg.HOST, () => {
      s.off("error", reject);
      resolve(s);
    });
  });
  const server = await listening.catch(async (err: unknown) => {
    // Port taken or the like: release what was opened, so the process can exit with the error.
    await invalidation?.stop();
    await ownBus?.close();
    await retention?.stop();
    await rateLimiter.close();
    await db?.close();
    throw err;
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  // idle keep-alive connections outlive the proxies' idle timeout (docs/design/edge.md#connections-and-timeouts)
  server.keepAliveTimeout = cfg.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  const port = (server.address() as AddressInfo).port;
  // A separate metrics listener keeps /metrics off the public port (docs/design/operations.md#metrics).
  const metrics = await startMetricsServer(cfg.METRICS_PORT, log, cfg.HOST);
  const baseUrl = `${cfg.PUBLIC_BASE_URL ?? `http://localhost:${port}`}/v1`;
  return {
    baseUrl,
    port,
    metricsPort: metrics?.port,
    stop: async () => {
      draining = true;
      sseStreams.closeAll();
      // every answer from now on carries Connection: close; a connection idle 5 s closes
      await drainHttpServer(server, connections!, { idleCloseAfterMs: cfg.HTTP_DRAIN_IDLE_MS });
      await metrics?.stop();
      await invalidation?.stop();
      await ownBus?.close();
      identity.close();
      forum.close();
      council.close();
      knowledge.close();
      translation.close();
      notifications.close();
      await retention?.stop();
      await rateLimiter.close();
      await db?.close();
    },
  };
}
