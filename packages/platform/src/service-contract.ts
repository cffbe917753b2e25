import type { council, forum, identity, knowledge, notifications, translation } from "@aps/proto";
import type { EventBus } from "./bus/types.js";
import type { Clock } from "./clock.js";
import type { PoolSizing } from "./db/database.js";
import type { ServiceTarget } from "./grpc/connect.js";
import type { LocalEndpoint } from "./grpc/local.js";
import type { Logger } from "./log.js";
import { openDatabase } from "./db/database.js";
import { migrate } from "./db/migrate.js";
import { databaseOptionsOf, openServiceDeps, type CommonConfig, type ServiceDeps } from "./runtime.js";
import { SERVICES, type DeployableName, type ServiceName } from "./topology.js";

/**
 * The generated gRPC definition of each service of {@link SERVICES}, keyed by its name: what a
 * client of it dials (docs/design/services.md).
 */
export interface ServiceDefinitions {
  forum: typeof forum.ForumServiceDefinition;
  knowledge: typeof knowledge.KnowledgeServiceDefinition;
  translation: typeof translation.TranslationServiceDefinition;
  identity: typeof identity.IdentityServiceDefinition;
  council: typeof council.CouncilServiceDefinition;
  notifications: typeof notifications.NotificationsServiceDefinition;
}

/**
 * Where a caller finds each service: its gRPC address (`host:port`, from `<NAME>_GRPC_ADDR`) when
 * run on its own, or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport).
 */
export type ServiceTargets = { [N in ServiceName]: ServiceTarget<ServiceDefinitions[N]> };

/** The in-process endpoint of each service (the all-in-one, docs/design/services.md#in-process-transport). */
export type LocalEndpoints = { [N in ServiceName]: LocalEndpoint<ServiceDefinitions[N]> };

/**
 * The services `name` calls over gRPC: its `dependsOn` in {@link SERVICES} (docs/design/services.md#the-service-list); the
 * gateway calls every one of them.
 */
export type DependencyOf<N extends DeployableName> = N extends ServiceName
  ? Extract<(typeof SERVICES)[number], { name: N }>["dependsOn"][number]
  : ServiceName;

/** The services `name` calls, read from {@link SERVICES} (the gateway: all of them, in list order). */
export function dependenciesOf<N extends DeployableName>(name: N): readonly DependencyOf<N>[] {
  const spec = SERVICES.find((s) => s.name === name);
  return (spec ? spec.dependsOn : SERVICES.map((s) => s.name)) as readonly DependencyOf<N>[];
}

/**
 * What a service's `start` gets (docs/design/services.md#one-service-contract): its parsed config and everything that differs
 * between running it on its own (`runStandalone`) and inside the all-in-one.
 */
export interface ServiceContext<N extends DeployableName, Cfg> {
  /** The service's config, from its `loadConfig`. */
  cfg: Cfg;
  /** Its logger: `createLogger(name, LOG_LEVEL)` on its own, a child `{ service: name }` in the all-in-one. */
  log: Logger;
  /** The clock of its deadlines and days (`systemClock` on its own; tests of the all-in-one drive one). */
  clock: Clock;
  /**
   * The services it calls (its `dependsOn`): the gRPC addresses of its config (`FORUM_GRPC_ADDR`…)
   * on its own, the in-process endpoints of the services started before it in the all-in-one.
   */
  targets: { [D in DependencyOf<N>]: ServiceTarget<ServiceDefinitions[D]> };
  /**
   * The all-in-one's in-process bus, used when `NATS_URL` is unset (openServiceDeps); undefined on
   * its own (then a private in-process bus, with a warning).
   */
  bus?: EventBus | undefined;
  /**
   * The all-in-one's database (its embedded server, docs/design/services.md#embedded-postgresql, or the DATABASE_URL it was
   * given), for a service whose own rule uses it only in-process (knowledge's index, docs/design/search-and-translation.md#the-postgresql-engine);
   * undefined on its own. The services with a schema read `<NAME>_DATABASE_URL`, else this, else DATABASE_URL.
   */
  databaseUrl?: string | undefined;
  /** Its connection pool's size and idle time (the all-in-one's small pools on its embedded server, docs/design/services.md#embedded-postgresql). */
  pool?: PoolSizing | undefined;
  /** Listen address instead of `<NAME>_LISTEN_ADDR` (the all-in-one: loopback, a port chosen by the OS). */
  listenAddr?: string | undefined;
}

/** What a started service gives back: at least a way to stop it. */
export interface StartedService {
  /**
   * Stops what it started and closes what it opened (its database, its own bus connection —
   * never the bus of the context), in that service's safe order.
   */
  stop(): Promise<void>;
}

/** A started gRPC service: its bound port and its in-process endpoint (docs/design/services.md#in-process-transport). */
export interface StartedGrpcService<N extends ServiceName> extends StartedService {
  port: number;
  local: LocalEndpoint<ServiceDefinitions[N]>;
}

/**
 * One APS service as every launcher sees it (docs/design/services.md#one-service-contract; docs/design/services.md#start-and-stop-order): its name in
 * {@link SERVICES} (or the gateway), how it reads its config from env, and how it starts from a
 * {@link ServiceContext}. The mapping from config to the service's options lives here once: the
 * standalone entry point (`runStandalone`, `services/<name>/src/main.ts`) and the all-in-one both
 * call `start`.
 */
export interface ApsService<
  N extends DeployableName,
  Cfg extends { LOG_LEVEL: string },
  Handle extends StartedService,
> {
  name: N;
  /** Parses the service's env; throws listing every bad variable. */
  loadConfig(env: NodeJS.ProcessEnv): Cfg;
  /** Starts it; resolves once it serves. */
  start(ctx: ServiceContext<N, Cfg>): Promise<Handle>;
  /**
   * Applies its schema's migrations and SQL functions, then closes what it opened: the migration
   * job's whole work (`APS_MIGRATE_ONLY=1`, docs/operations/upgrading.md). Needs only the database
   * (no bus, no listen port). Absent: the service has no schema of its own. Rejects when a
   * migration fails (nothing of it is applied: each runs in one transaction).
   */
  migrate?(ctx: { cfg: Cfg; log: Logger }): Promise<void>;
  /**
   * Run on its own only: whether `runStandalone` serves `GET /metrics` on METRICS_PORT for it
   * (default true; the gateway serves its own, docs/design/operations.md#metrics), and what it announces once started.
   */
  standalone?: { metricsServer?: boolean; announce?(handle: Handle, log: Logger): void };
}

/** A gRPC service of the list: it binds a port and has an in-process endpoint. */
export type ApsGrpcService<N extends ServiceName, Cfg extends { LOG_LEVEL: string }> = ApsService<
  N,
  Cfg,
  StartedGrpcService<N>
>;

/**
 * Stops `stops` in order, each after the previous one settled; rejects with the first failure after
 * trying them all (a failed close must not keep the others open).
 */
export async function stopInOrder(stops: (() => Promise<void> | void)[]): Promise<void> {
  const failed: unknown[] = [];
  for (const s of stops) {
    try {
      await s();
    } catch (err) {
      failed.push(err);
    }
  }
  if (failed.length > 0) throw failed[0] instanceof Error ? failed[0] : new Error(String(failed[0]));
}

/**
 * Starts a service that owns a PostgreSQL schema (docs/design/services.md#start-and-stop-order) from its context: opens its
 * database (`<NAME>_DATABASE_URL`, else the all-in-one's, else DATABASE_URL; sized by `ctx.pool`)
 * and its bus (NATS_URL, else `ctx.bus`) with openServiceDeps, then calls `start`. The handle's
 * `stop` also closes the bus connection it opened (never `ctx.bus`). When `start` rejects, the
 * database and that connection are closed before the error is passed on.
 */
export async function startWithServiceDeps<
  N extends ServiceName,
  Cfg extends CommonConfig & { databaseUrl?: string | undefined },
  H extends StartedService,
>(name: N, ctx: ServiceContext<N, Cfg>, start: (deps: ServiceDeps) => Promise<H>): Promise<H> {
  const deps = await openServiceDeps(
    name,
    { ...ctx.cfg, databaseUrl: ctx.cfg.databaseUrl ?? ctx.databaseUrl },
    ctx.bus,
    ctx.log,
    ctx.pool,
  );
  const closeBus = async () => {
    if (deps.bus !== ctx.bus) await deps.bus.close();
  };
  let handle: H;
  try {
    handle = await start(deps);
  } catch (err) {
    await stopInOrder([() => deps.db.close(), closeBus]).catch(() => undefined);
    throw err;
  }
  return { ...handle, stop: () => stopInOrder([() => handle.stop(), closeBus]) };
}

/**
 * The migration job's work for a service with a schema (ApsService.migrate): opens `schema` at the
 * config's database URL (`databaseUrl`, i.e. `<NAME>_DATABASE_URL`, else DATABASE_URL) with one
 * connection, applies `dirs` and `functionsDir` whatever DATABASE_MIGRATIONS says (this is the
 * step that applies them), and closes it. Throws when there is no URL or a migration fails.
 */
export async function migrateSchema(
  schema: string,
  cfg: Parameters<typeof databaseOptionsOf>[0] &
    Pick<CommonConfig, "DATABASE_URL"> & { databaseUrl?: string | undefined },
  log: Logger,
  dirs: string[],
  functionsDir?: string,
): Promise<void> {
  const db = await openDatabase({
    url: cfg.databaseUrl ?? cfg.DATABASE_URL,
    schema,
    log,
    ...databaseOptionsOf(cfg),
    poolSize: 1,
    migrations: "apply",
  });
  try {
    await migrate(db, dirs, log, functionsDir ? { functionsDir } : {});
  } finally {
    await db.close();
  }
}
