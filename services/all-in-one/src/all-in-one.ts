import {
  grpcAddrEnv,
  InProcessBus,
  PgTestClock,
  SERVICES,
  stopInOrder,
  systemClock,
  type ApsService,
  type Clock,
  type EventBus,
  type GrpcAddrEnv,
  type LocalEndpoints,
  type Logger,
  type PoolSizing,
  type ServiceName,
  type StartedGrpcService,
  type StartedService,
} from "@aps/platform";
import { identityService } from "@aps/identity";
import { forumService } from "@aps/forum";
import { councilService } from "@aps/council";
import { knowledgeService } from "@aps/knowledge";
import { notificationsService } from "@aps/notifications";
import { translationService } from "@aps/translation";
import { gatewayService, type LocalServices } from "@aps/gateway";
import { decideApertium, startApertium, withApertium, type RunningApertium } from "./apertium.js";
import { loadConfig } from "./config.js";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres.js";
import { allInOneTrust } from "./internal-token.js";
import { ensureDatabase, sandboxDatabase, sandboxEnv } from "./sandbox.js";

/** A running all-in-one APS. */
export interface AllInOne {
  baseUrl: string;
  port: number;
  /** The database URL the services use: the embedded server's, or the DATABASE_URL given. */
  databaseUrl: string;
  /**
   * Loopback gRPC addresses of the services, keyed by their env var (`FORUM_GRPC_ADDR`, …), for
   * another gateway (or grpcurl) to use. Nothing inside this process calls them: its clients use `local`.
   */
  grpcAddrs: Record<GrpcAddrEnv, string>;
  /**
   * The token those gRPC ports accept from any deployable name (`aps-caller: gateway`,
   * `authorization: Bearer <token>`; internal-token.ts): made in `APS_DATA_DIR/internal-token`, or
   * the operator's APS_INTERNAL_TOKEN; undefined when the operator set only APS_PEER_DIGESTS.
   */
  internalToken: string | undefined;
  /** The in-process endpoints every client of this process calls (docs/design/services.md#in-process-transport). */
  local: Required<LocalServices>;
  /** The Apertium APY this process started as its translation engine (docs/design/search-and-translation.md#translation-engines), if any. */
  apertium?: { url: string; pid: number };
  /** The sandbox this process runs beside the live instance (APS_SANDBOX=on, docs/design/agents.md#sandbox): its gateway and database. */
  sandbox?: { baseUrl: string; databaseUrl: string };
  stop(): Promise<void>;
}

/** Test seams of the all-in-one. */
export interface AllInOneOptions {
  /** One clock for every service (tests drive Council deadlines with it). */
  clock?: Clock;
}

/**
 * Starts every service in this process: each in its own schema of one PostgreSQL — the embedded
 * server under `APS_DATA_DIR/postgres` (docs/design/services.md#embedded-postgresql) unless DATABASE_URL is set —, the given bus
 * (in-process unless NATS_URL is set), gRPC on loopback ports chosen by the OS that accept only
 * callers presenting the internal token (internal-token.ts), and the gateway
 * on `PORT`. The same definitions (`ApsService`, docs/design/services.md#one-service-contract) run each service in the distributed mode. Inside this
 * process the clients call the services in-process (no HTTP/2, no protobuf; docs/design/services.md#in-process-transport);
 * the gRPC ports stay open for a second gateway and for tooling.
 * Start order is SERVICES' (each after the services it calls: forum → knowledge, translation →
 * identity → council → notifications), then the gateway.
 * The translation engine comes from env (`TRANSLATION_ENGINE`…); without one, Apertium APY is
 * started here when `apertium-apy` is on the PATH (docs/design/search-and-translation.md#translation-engines; stopped last on `stop()`), and
 * otherwise the system still starts and translation generation answers 503.
 */
export async function startAllInOne(
  givenEnv: NodeJS.ProcessEnv,
  log: Logger,
  bus: EventBus,
  opts: AllInOneOptions = {},
): Promise<AllInOne> {
  const clock = opts.clock ?? systemClock;
  const aioCfg = loadConfig(givenEnv);
  // APY takes seconds to load its pairs: it starts while the database does (never rejects).
  const starting = startApertiumIfAvailable(givenEnv, aioCfg, log);
  let apertium: RunningApertium | undefined;
  let embedded: EmbeddedPostgres | undefined;
  // what stops after the live services and before the embedded server (the sandbox, then this instance's test clock)
  const stopLast: (() => Promise<void>)[] = [];
  let sandboxAt: { baseUrl: string; databaseUrl: string } | undefined;
  try {
    embedded = aioCfg.DATABASE_URL
      ? undefined
      : await startEmbeddedPostgres({
          dataDir: aioCfg.APS_DATA_DIR,
          port: aioCfg.APS_EMBEDDED_PG_PORT,
          template: aioCfg.APS_EMBEDDED_PG_TEMPLATE,
          log: log.child({ service: "postgres" }),
        });
    apertium = await starting;
    const trust = allInOneTrust(givenEnv, aioCfg.APS_DATA_DIR, log);
    const env = { ...(apertium ? withApertium(trust.env, apertium.url) : trust.env) };
    const databaseUrl = embedded?.url ?? env.DATABASE_URL;
    if (!databaseUrl) throw new Error("no database: set DATABASE_URL, or leave it unset for the embedded server");
    // A sandbox instance creates its database when missing and its clock moves on request
    // (docs/design/agents.md#sandbox); the live one's clock is the given one.
    if (!aioCfg.APS_LIVEMODE && !embedded) await ensureDatabase(databaseUrl);
    const ownClock = aioCfg.APS_LIVEMODE
      ? undefined
      : await PgTestClock.open(databaseUrl, log.child({ service: "test-clock" }));
    stopLast.push(async () => await ownClock?.close());
    if (aioCfg.APS_LIVEMODE && aioCfg.APS_SANDBOX === "on") {
      const url = await sandboxDatabase(aioCfg.APS_SANDBOX_DATABASE_URL, databaseUrl, embedded !== undefined);
      const sLog = log.child({ instance: "sandbox" });
      const sEnv = sandboxEnv(env, url);
      const sandbox = await startAllInOne(sEnv, sLog, new InProcessBus(sLog, sEnv.APS_SUBJECT_PREFIX));
      stopLast.unshift(() => sandbox.stop());
      sandboxAt = { baseUrl: sandbox.baseUrl, databaseUrl: url };
      env.SANDBOX_URL = new URL(sandbox.baseUrl).origin;
    }
    const aps = await startServices(env, embedded?.url, log, bus, ownClock ?? clock);
    return {
      ...aps,
      internalToken: trust.token,
      ...(apertium ? { apertium: { url: apertium.url, pid: apertium.pid } } : {}),
      ...(sandboxAt ? { sandbox: sandboxAt } : {}),
      // the live services, then the sandbox and the clock (both on the embedded server when there
      // is one), then that server: stopped first, it cut the sandbox's connections mid-query
      stop: async () => {
        await aps.stop();
        await stopInOrder(stopLast);
        await embedded?.stop();
        await apertium?.stop();
      },
    };
  } catch (err) {
    await stopInOrder(stopLast).catch(() => undefined);
    await embedded?.stop();
    await (apertium ?? (await starting))?.stop();
    throw err;
  }
}

/**
 * Starts APY when `decideApertium` says so (docs/design/search-and-translation.md#translation-engines) and logs why not otherwise. A failed
 * start is logged and the system runs without an engine, as it would without APY installed.
 */
async function startApertiumIfAvailable(
  env: NodeJS.ProcessEnv,
  cfg: ReturnType<typeof loadConfig>,
  log: Logger,
): Promise<RunningApertium | undefined> {
  const tLog = log.child({ service: "apertium" });
  const decision = decideApertium(env, { mode: cfg.APS_START_APERTIUM, modesDir: cfg.APS_APERTIUM_MODES });
  if (!decision.start) {
    tLog.info({ reason: decision.reason }, "not starting Apertium APY");
    return undefined;
  }
  try {
    return await startApertium(decision.program, decision.modesDir, tLog);
  } catch (err) {
    tLog.error({ err }, "Apertium APY did not start; translation generation answers 503");
    return undefined;
  }
}

/**
 * Connection pools on the embedded server (docs/design/services.md#embedded-postgresql): every backend costs ~20 MiB of RSS, so
 * each service keeps few, and closes one that stayed idle for 2 s. The forum takes the write
 * load, but its votes go through one connection at a time (group commit, docs/design/votes-and-heat.md#group-commits-in-the-forum), so 3
 * cover votes, the outbox relay and the read misses; identity is mostly behind the gateway's
 * authentication cache; the council is rarely called; translation makes single statements only
 * (no transaction holds a connection while it asks for another).
 */
const IDLE_MS = 2_000;
const EMBEDDED_POOLS = {
  forum: { poolSize: 3, idleTimeoutMs: IDLE_MS },
  identity: { poolSize: 2, idleTimeoutMs: IDLE_MS },
  council: { poolSize: 2, idleTimeoutMs: IDLE_MS },
  notifications: { poolSize: 2, idleTimeoutMs: IDLE_MS },
  translation: { poolSize: 1, idleTimeoutMs: IDLE_MS },
  // one connection per search (its queries and its page); a second one for the index's writes
  knowledge: { poolSize: 2, idleTimeoutMs: IDLE_MS },
} as const;

/** The definition of every service of the list (docs/design/services.md#one-service-contract): a service missing here fails the type check. */
// each definition has its own config type; the loop hands each its own loadConfig's result
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const DEFINITIONS: { [N in ServiceName]: ApsService<N, any, StartedGrpcService<N>> } = {
  forum: forumService,
  knowledge: knowledgeService,
  translation: translationService,
  identity: identityService,
  council: councilService,
  notifications: notificationsService,
};

/**
 * Starts the services of SERVICES in its order (each after the services it calls, docs/design/services.md#the-service-list),
 * then the gateway, each from its one definition (docs/design/services.md#one-service-contract) with the same context: the env
 * as given, this process's bus, clock and database (embedded, or DATABASE_URL), small pools on the
 * embedded server, a loopback port chosen by the OS, and the in-process endpoints of the services
 * started before it (`embeddedUrl`: the embedded server's URL, when there is one). On a failed start, what was
 * started is stopped (reverse order) and the error passed on. `stop()` stops the services and the bus,
 * not the embedded server.
 */
async function startServices(
  env: NodeJS.ProcessEnv,
  embeddedUrl: string | undefined,
  log: Logger,
  bus: EventBus,
  clock: Clock,
): Promise<Omit<AllInOne, "internalToken">> {
  const databaseUrl = embeddedUrl ?? env.DATABASE_URL;
  const local: Partial<LocalEndpoints> = {};
  const started: StartedService[] = [];
  const start = <N extends ServiceName | "gateway", Cfg extends { LOG_LEVEL: string }, H extends StartedService>(
    def: ApsService<N, Cfg, H>,
    grpc?: { listenAddr: string; pool: PoolSizing | undefined },
  ): Promise<H> =>
    def.start({
      cfg: def.loadConfig(env),
      log: log.child({ service: def.name }),
      clock,
      bus,
      databaseUrl,
      targets: local as never, // every service it calls started before it (SERVICES' order)
      ...grpc,
    });
  const startService = <N extends ServiceName>(name: N): Promise<StartedGrpcService<N>> =>
    start(DEFINITIONS[name], { listenAddr: "127.0.0.1:0", pool: embeddedUrl ? EMBEDDED_POOLS[name] : undefined });
  const stopAll = () => stopInOrder([...started].reverse().map((s) => () => s.stop()));
  const grpcAddrs = {} as Record<GrpcAddrEnv, string>;
  try {
    for (const { name } of SERVICES) {
      const svc = await startService(name);
      started.push(svc);
      Object.assign(local, { [name]: svc.local });
      grpcAddrs[grpcAddrEnv(name)] = `127.0.0.1:${svc.port}`;
    }
    // The gateway invalidates its caches from the same bus (its own NATS connection when NATS_URL is set).
    const gateway = await start(gatewayService);
    started.push(gateway);
    return {
      baseUrl: gateway.baseUrl,
      port: gateway.port,
      databaseUrl: databaseUrl!,
      grpcAddrs,
      local: local as Required<LocalServices>,
      stop: async () => {
        // reverse start order: a service stops after everything that calls it; the embedded
        // server is the caller's to stop
        await stopAll();
        await bus.close();
      },
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }
}
