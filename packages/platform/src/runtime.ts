import { z } from "zod";
import { openDatabase, POOL_WAIT_MS, type DatabaseOptions, type PoolSizing, type Database } from "./db/database.js";
import { DEFAULT_ACK_WAIT_MS, JetStreamBus, type JetStreamOptions } from "./bus/jetstream.js";
import { InProcessBus } from "./bus/memory.js";
import type { EventBus } from "./bus/types.js";
import { createLogger, type Logger } from "./log.js";
import { intVar, optionalVar } from "./config.js";
import { DEFAULT_STREAM_LIMITS, type StreamLimits } from "./bus/stream-limits.js";
import { shutdownTelemetry } from "./telemetry-hooks.js";
import { internalTrustOf, trustEnvSchema, type InternalTrust } from "./trust.js";
import { retentionEnvSchema, retentionOf, type RetentionSettings } from "./retention.js";
import { SERVER_CONNECTION_AGE, type GrpcServerOptions } from "./grpc/server.js";
import { DEFAULT_DEADLINE_MS } from "./grpc/client.js";

/**
 * Shortest `NATS_ACK_WAIT_MS` accepted, ms: below it a handler still running (or an event still
 * waiting its turn in a fetched batch) would be redelivered under ordinary load.
 */
export const MIN_ACK_WAIT_MS = 1_000;

/**
 * Env vars every service shares. A service-specific database URL (`<SERVICE>_DATABASE_URL`) wins
 * over `DATABASE_URL`; a service run on its own needs one of them (the all-in-one sets
 * `DATABASE_URL` to its embedded server, docs/design/services.md#embedded-postgresql, and keeps it under `APS_DATA_DIR`).
 * Without `NATS_URL` a service needs an in-process bus handed over by the all-in-one launcher.
 */
export const commonEnvSchema = z.object({
  DATABASE_URL: optionalVar(),
  /**
   * Connections in this process's pool, ≥ 1 (default 5). The chart checks pool × the HPA's
   * maxReplicas, summed over services, against the server's max_connections (docs/design/operations.md#connection-budget-and-pgbouncer).
   */
  DATABASE_POOL_MAX: intVar(5, 1),
  /**
   * Direct PostgreSQL URL for migrations (default: the service's database URL): behind a PgBouncer
   * in transaction mode, migrations' session-level advisory lock needs a real session (docs/design/operations.md#connection-budget-and-pgbouncer).
   */
  DATABASE_MIGRATION_URL: optionalVar(),
  /** What the database URL reaches: `none` (PostgreSQL) or `transaction` (a PgBouncer in transaction mode; docs/design/operations.md#connection-budget-and-pgbouncer). */
  DATABASE_POOLER: z.enum(["none", "transaction"]).default("none"),
  /**
   * Longest a pooled connection lives, seconds (0, the default: as long as it is used). Behind a
   * PgBouncer the chart sets it: a PgBouncer pod that is stopping waits for its clients to
   * disconnect (1.23's SIGTERM), and the pools move to the other pods within this time, each
   * connection closed between two uses — none cut under a query (docs/reliability.md "Rollouts").
   */
  DATABASE_MAX_LIFETIME_SECONDS: z.coerce.number().int().min(0).max(86_400).default(0),
  /**
   * `apply` (default): a starting service applies its missing migrations and its SQL functions;
   * `verify`: it only checks that none is missing and refuses to start otherwise — the chart's
   * migration Job applied them (MigrationMode, docs/operations/upgrading.md).
   */
  DATABASE_MIGRATIONS: z.enum(["apply", "verify"]).default("apply"),
  APS_DATA_DIR: z.string().default("./data"),
  NATS_URL: optionalVar(),
  NATS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("APS"),
  APS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/)
    .default("aps"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * `false` in a sandbox instance (docs/design/agents.md#sandbox): its keys are `sk_test_…`, its events and
   * webhooks carry `livemode: false`, and its gateway serves the test clock. Default `true`.
   */
  APS_LIVEMODE: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** JetStream stream retention (docs/design/events.md#stream-retention): longest an event is kept, seconds (default 7 days). */
  NATS_STREAM_MAX_AGE_S: intVar(DEFAULT_STREAM_LIMITS.maxAgeSeconds, 60),
  /** … and the stream's size cap, bytes (default 1 GiB); the oldest events go first. */
  NATS_STREAM_MAX_BYTES: intVar(DEFAULT_STREAM_LIMITS.maxBytes, 1_048_576),
  /** … and the most events kept per subject (default 1 000 000), so one busy subject cannot evict the others. */
  NATS_STREAM_MAX_MSGS_PER_SUBJECT: intVar(DEFAULT_STREAM_LIMITS.maxMsgsPerSubject, 1),
  /**
   * Copies of that stream in the JetStream cluster, 1–5 (default 1; 3 in the chart's production
   * values): applied when a service connects, to a new stream and to an existing one (updated in
   * place). More than 1 on a single server fails the start with an error naming this variable
   * (docs/design/events.md#stream-replicas).
   */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * JetStream `ack_wait` of this service's durable consumers, ms (default 30 000, at least 1 000):
   * how long a delivery held by a process that died or was cut off waits before it is delivered
   * again; applied to existing consumers at start (docs/design/events.md#jetstream-stream-and-consumers).
   */
  NATS_ACK_WAIT_MS: intVar(DEFAULT_ACK_WAIT_MS, MIN_ACK_WAIT_MS),
  /** NATS user and password of this service (the chart's per-service users, docs/design/services.md#caller-policy-and-internal-trust); unset = no authentication. */
  NATS_USER: optionalVar(),
  NATS_PASSWORD: optionalVar(),
  /**
   * Longest a client's gRPC connection to this service lives, ms (default 300 000, at least
   * 1 000): then clients reconnect and resolve the service's address again, finding replicas a
   * scale-up added (docs/design/services.md#balancing-and-connection-age).
   */
  GRPC_MAX_CONNECTION_AGE_MS: intVar(SERVER_CONNECTION_AGE.maxAgeMs, 1_000),
  /** How long calls still running on a connection past its age may finish, ms (default 15 000). */
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: intVar(SERVER_CONNECTION_AGE.graceMs, 0),
  /**
   * Deadline of this process's calls to other services, ms (default 10 000, at least 100): a call
   * not answered by then fails 503 `upstream_unavailable` (docs/design/tests.md#real-infrastructure-in-ci). Keep it above
   * DATABASE_POOL_WAIT_MS, so a burst queued for a pool connection is answered before it is cut.
   */
  GRPC_DEADLINE_MS: intVar(DEFAULT_DEADLINE_MS, 100),
  /**
   * Longest a query waits for a connection of this process's pool, ms (default 8 000, at least
   * 100), then fails 503 `upstream_unavailable` (openDatabase; docs/design/services.md#deadlines-and-pool-wait).
   */
  DATABASE_POOL_WAIT_MS: intVar(POOL_WAIT_MS, 100),
  ...trustEnvSchema,
  /** Retention of the tables that only grow (docs/retention.md, docs/design/operations.md#retention). */
  ...retentionEnvSchema,
});

/** The connection age of a service's gRPC server from its config (startGrpcServer's options; docs/design/services.md#balancing-and-connection-age). */
export function grpcServerTuningOf(cfg: CommonConfig): GrpcServerTuning {
  return {
    maxConnectionAgeMs: cfg.GRPC_MAX_CONNECTION_AGE_MS,
    maxConnectionAgeGraceMs: cfg.GRPC_MAX_CONNECTION_AGE_GRACE_MS,
  };
}

/** The connection-age options of startGrpcServer (docs/design/services.md#balancing-and-connection-age). */
export type GrpcServerTuning = Pick<GrpcServerOptions, "maxConnectionAgeMs" | "maxConnectionAgeGraceMs">;

/**
 * The database options of a service from its config (DATABASE_POOL_MAX, DATABASE_MIGRATION_URL,
 * DATABASE_POOLER: docs/design/operations.md#connection-budget-and-pgbouncer; DATABASE_POOL_WAIT_MS; DATABASE_MIGRATIONS; DATABASE_MAX_LIFETIME_SECONDS), for openDatabase.
 */
export function databaseOptionsOf(
  cfg: Pick<
    CommonConfig,
    | "DATABASE_POOL_MAX"
    | "DATABASE_MIGRATION_URL"
    | "DATABASE_POOLER"
    | "DATABASE_POOL_WAIT_MS"
    | "DATABASE_MIGRATIONS"
    | "DATABASE_MAX_LIFETIME_SECONDS"
  >,
): Required<Pick<DatabaseOptions, "poolSize" | "pooler" | "poolWaitMs" | "migrations" | "maxLifetimeSeconds">> & {
  migrationUrl: string | undefined;
} {
  return {
    poolSize: cfg.DATABASE_POOL_MAX,
    migrationUrl: cfg.DATABASE_MIGRATION_URL,
    pooler: cfg.DATABASE_POOLER,
    poolWaitMs: cfg.DATABASE_POOL_WAIT_MS,
    migrations: cfg.DATABASE_MIGRATIONS,
    maxLifetimeSeconds: cfg.DATABASE_MAX_LIFETIME_SECONDS,
  };
}

/** The stream limits a service applies when it connects to JetStream (docs/design/events.md#stream-retention). */
export function streamLimitsOf(cfg: CommonConfig): StreamLimits {
  return {
    maxAgeSeconds: cfg.NATS_STREAM_MAX_AGE_S,
    maxBytes: cfg.NATS_STREAM_MAX_BYTES,
    maxMsgsPerSubject: cfg.NATS_STREAM_MAX_MSGS_PER_SUBJECT,
  };
}

/**
 * The one choice of a service's event bus (docs/design/events.md#path-of-an-event; docs/design/services.md#one-service-contract):
 * JetStream when `NATS_URL` is set — the stream created or updated with the config's retention limits
 * (docs/design/events.md#stream-retention), copies (`NATS_STREAM_REPLICAS`, docs/design/events.md#stream-replicas) and consumers' ack wait (docs/design/events.md#jetstream-stream-and-consumers)
 * —, else `sharedBus` (the all-in-one's), else a private in-process bus, with a warning. The caller
 * closes a bus it did not pass in. Rejects when NATS refuses the stream (e.g. replicas on a single server).
 */
export async function openEventBus(
  service: string,
  cfg: CommonConfig,
  log: Logger,
  sharedBus?: EventBus,
): Promise<EventBus> {
  if (cfg.NATS_URL)
    return JetStreamBus.connect({
      ...natsConnectionOf(service, cfg, log),
      limits: streamLimitsOf(cfg),
      replicas: cfg.NATS_STREAM_REPLICAS,
      ackWaitMs: cfg.NATS_ACK_WAIT_MS,
    });
  if (sharedBus) return sharedBus;
  log.warn("NATS_URL is unset: using an in-process bus (events reach consumers in this process only)");
  return new InProcessBus(log, cfg.APS_SUBJECT_PREFIX);
}

/**
 * Where and as whom `service` reaches NATS (`NATS_URL`, `NATS_STREAM`, `APS_SUBJECT_PREFIX`,
 * `NATS_USER`/`NATS_PASSWORD`), without stream settings: what a process that only subscribes passes to
 * `JetStreamBus.connect` (the gateway: it leaves an existing stream as it is). Throws on no `NATS_URL`.
 */
export function natsConnectionOf(
  service: string,
  cfg: Pick<CommonConfig, "NATS_URL" | "NATS_STREAM" | "APS_SUBJECT_PREFIX" | "NATS_USER" | "NATS_PASSWORD">,
  log: Logger,
): JetStreamOptions {
  if (!cfg.NATS_URL) throw new Error(`${service}: no NATS_URL to connect to`);
  return {
    servers: cfg.NATS_URL,
    stream: cfg.NATS_STREAM,
    prefix: cfg.APS_SUBJECT_PREFIX,
    connectionName: `aps-${service}`,
    user: cfg.NATS_USER,
    pass: cfg.NATS_PASSWORD,
    log,
  };
}

/** The parsed shared part of a service's config. */
export type CommonConfig = z.infer<typeof commonEnvSchema>;

/** Infrastructure handed to a service's `start` function: the same code path in both run modes. */
export interface ServiceDeps {
  db: Database;
  bus: EventBus;
  log: Logger;
  /** Who the service is on gRPC and whom it accepts (docs/design/services.md#caller-policy-and-internal-trust); absent = no caller check. */
  trust?: InternalTrust;
  /** Retention of its tables (RETENTION_*, docs/design/operations.md#retention); absent = the defaults. */
  retention?: RetentionSettings;
  /** Its gRPC server's connection age (GRPC_MAX_CONNECTION_AGE_MS, docs/design/services.md#balancing-and-connection-age); absent = the defaults. */
  grpc?: GrpcServerTuning;
  /** Deadline of its calls to other services, ms (GRPC_DEADLINE_MS); absent = DEFAULT_DEADLINE_MS. */
  callDeadlineMs?: number;
}

/**
 * Opens the database and the bus for `service` from its config. `sharedBus` (all-in-one mode)
 * is used when there is no `NATS_URL`. `pool` sizes the service's connection pool (default
 * DATABASE_POOL_MAX connections kept 10 s when idle, see openDatabase). Throws when there is no database URL (see
 * openDatabase).
 */
export async function openServiceDeps(
  service: string,
  cfg: CommonConfig & { databaseUrl?: string | undefined },
  sharedBus?: EventBus,
  log: Logger = createLogger(service, cfg.LOG_LEVEL),
  pool?: PoolSizing,
): Promise<ServiceDeps> {
  const db = await openDatabase({
    url: cfg.databaseUrl ?? cfg.DATABASE_URL,
    schema: service,
    log,
    ...databaseOptionsOf(cfg),
    ...pool,
  });
  const bus = await openEventBus(service, cfg, log, sharedBus);
  if (cfg.RETENTION_PROCESSED_EVENTS <= cfg.NATS_STREAM_MAX_AGE_S * 1000)
    log.warn(
      { processedEventsMs: cfg.RETENTION_PROCESSED_EVENTS, streamMaxAgeS: cfg.NATS_STREAM_MAX_AGE_S },
      "RETENTION_PROCESSED_EVENTS is not longer than NATS_STREAM_MAX_AGE_S: an event redelivered or replayed from the stream after its id was pruned would be handled twice (docs/design/operations.md#retention)",
    );
  return {
    db,
    bus,
    log,
    retention: retentionOf(cfg),
    trust: internalTrustOf(service, cfg),
    grpc: grpcServerTuningOf(cfg),
    callDeadlineMs: cfg.GRPC_DEADLINE_MS,
  };
}

/**
 * Runs `stop` once on SIGTERM or SIGINT (graceful shutdown: drain, flush pending spans, then
 * exit 0). A second signal exits at once.
 */
export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, "shutting down");
    stop().then(
      () => shutdownTelemetry().finally(() => process.exit(0)),
      (err: unknown) => {
        log.error({ err: String(err) }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => handler("SIGTERM"));
  process.on("SIGINT", () => handler("SIGINT"));
}
