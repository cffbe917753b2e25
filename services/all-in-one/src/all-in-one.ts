import {
  grpcAddrEnv,
  openDatabase,
  openServiceDeps,
  retentionOf,
  SERVICES,
  systemClock,
  type Clock,
  type EventBus,
  type GrpcAddrEnv,
  type Logger,
  type ServiceName,
} from "@aps/platform";
import { loadConfig as identityConfig, ownerVerificationOf, startIdentity } from "@aps/identity";
import { forumLimits, loadConfig as forumConfig, startForum } from "@aps/forum";
import { loadConfig as councilConfig, startCouncil } from "@aps/council";
import { loadConfig as notificationsConfig, startNotifications } from "@aps/notifications";
import { loadConfig as gatewayConfig, startGateway, type LocalServices } from "@aps/gateway";
import {
  engineFromConfig,
  loadConfig as knowledgeConfig,
  openKnowledgeBus,
  startKnowledge,
  wantsDatabase,
} from "@aps/knowledge";
import {
  engineFromConfig as translationEngine,
  loadConfig as translationConfig,
  startTranslation,
  translationQuotas,
} from "@aps/translation";
import { decideApertium, startApertium, withApertium, type RunningApertium } from "./apertium.js";
import { loadConfig } from "./config.js";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres.js";

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
  /** The in-process endpoints every client of this process calls (docs/adr/0085-local-transport-in-the-all-in-one.md). */
  local: Required<LocalServices>;
  /** The Apertium APY this process started as its translation engine (docs/adr/0137), if any. */
  apertium?: { url: string; pid: number };
  stop(): Promise<void>;
}

/** Test seams of the all-in-one. */
export interface AllInOneOptions {
  /** One clock for every service (tests drive Council deadlines with it). */
  clock?: Clock;
}

/**
 * Starts every service in this process: each in its own schema of one PostgreSQL — the embedded
 * server under `APS_DATA_DIR/postgres` (docs/adr/0080) unless DATABASE_URL is set —, the given bus
 * (in-process unless NATS_URL is set), gRPC on loopback ports chosen by the OS, and the gateway
 * on `PORT`. The same `start*` functions run each service in the distributed mode. Inside this
 * process the clients call the services in-process (no HTTP/2, no protobuf; docs/adr/0085);
 * the gRPC ports stay open for a second gateway and for tooling.
 * Start order follows the gRPC dependencies: forum → knowledge, translation → identity → council →
 * notifications → gateway.
 * The translation engine comes from env (`TRANSLATION_ENGINE`…); without one, Apertium APY is
 * started here when `apertium-apy` is on the PATH (docs/adr/0137; stopped last on `stop()`), and
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
    const env = apertium ? withApertium(givenEnv, apertium.url) : givenEnv;
    const aps = await startServices(env, embedded, log, bus, clock);
    return {
      ...aps,
      ...(apertium ? { apertium: { url: apertium.url, pid: apertium.pid } } : {}),
      stop: async () => {
        await aps.stop();
        await apertium?.stop();
      },
    };
  } catch (err) {
    await embedded?.stop();
    await (apertium ?? (await starting))?.stop();
    throw err;
  }
}

/**
 * Starts APY when `decideApertium` says so (docs/adr/0137) and logs why not otherwise. A failed
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
 * Connection pools on the embedded server (docs/adr/0080): every backend costs ~20 MiB of RSS, so
 * each service keeps few, and closes one that stayed idle for 2 s. The forum takes the write
 * load, but its votes go through one connection at a time (group commit, docs/adr/0097), so 3
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

async function startServices(
  givenEnv: NodeJS.ProcessEnv,
  embedded: EmbeddedPostgres | undefined,
  log: Logger,
  bus: EventBus,
  clock: Clock,
): Promise<AllInOne> {
  // Every service reads DATABASE_URL; the gateway keeps its per-minute counters in this process
  // unless a database is given explicitly (one gateway here, docs/adr/0070).
  const env = embedded ? { ...givenEnv, DATABASE_URL: embedded.url } : givenEnv;
  const idCfg = identityConfig(env);
  const forumCfg = forumConfig(env);
  const councilCfg = councilConfig(env);
  const notifCfg = notificationsConfig(env);
  const gwCfg = gatewayConfig(givenEnv);
  const pools = embedded ? EMBEDDED_POOLS : undefined;
  const loopback = "127.0.0.1:0";

  const [idDeps, forumDeps, councilDeps, notifDeps] = await Promise.all([
    openServiceDeps("identity", idCfg, bus, log.child({ service: "identity" }), pools?.identity),
    openServiceDeps("forum", forumCfg, bus, log.child({ service: "forum" }), pools?.forum),
    openServiceDeps("council", councilCfg, bus, log.child({ service: "council" }), pools?.council),
    openServiceDeps("notifications", notifCfg, bus, log.child({ service: "notifications" }), pools?.notifications),
  ]);
  const forum = await startForum(forumDeps, {
    listenAddr: loopback,
    clock,
    limits: forumLimits(forumCfg),
  });
  const kCfg = knowledgeConfig(env);
  const kLog = log.child({ service: "knowledge" });
  const kBus = await openKnowledgeBus(kCfg, kLog, bus);
  // The search index lives in this database's `knowledge` schema (docs/adr/0142), unless
  // Meilisearch or a MiniSearch folder is configured.
  const kDb = wantsDatabase(kCfg)
    ? await openDatabase({
        url: kCfg.KNOWLEDGE_DATABASE_URL ?? env.DATABASE_URL,
        schema: "knowledge",
        log: kLog,
        ...pools?.knowledge,
      })
    : undefined;
  const knowledge = await startKnowledge(
    { bus: kBus, log: kLog },
    {
      listenAddr: loopback,
      forumAddr: forum.local,
      engine: engineFromConfig(kCfg, kDb && { db: kDb, log: kLog }),
      docsDir: kCfg.KNOWLEDGE_DOCS_DIR,
    },
  );
  const tCfg = translationConfig(env);
  const tLog = log.child({ service: "translation" });
  const tDb = await openDatabase({ url: tCfg.databaseUrl, schema: "translation", log: tLog, ...pools?.translation });
  const translation = await startTranslation(
    { db: tDb, log: tLog },
    {
      listenAddr: loopback,
      forumAddr: forum.local,
      clock,
      engine: translationEngine(tCfg),
      ...translationQuotas(tCfg),
      timeoutMs: tCfg.TRANSLATION_TIMEOUT_MS,
      retention: retentionOf(tCfg),
    },
  );
  const identity = await startIdentity(idDeps, {
    listenAddr: loopback,
    clock,
    forumAddr: forum.local,
    joinsPerSourcePerDay: idCfg.JOINS_PER_SOURCE_PER_DAY,
    sagacityVotesPageSize: idCfg.SAGACITY_VOTES_PAGE_SIZE,
    owners: ownerVerificationOf(idCfg),
  });
  const council = await startCouncil(councilDeps, {
    listenAddr: loopback,
    clock,
    identityAddr: identity.local,
    forumAddr: forum.local,
    deadlineMs: councilCfg.COUNCIL_DEADLINE,
    tickMs: councilCfg.COUNCIL_TICK_MS,
  });
  const notifications = await startNotifications(notifDeps, {
    listenAddr: loopback,
    feedRetentionMs: notifCfg.FEED_RETENTION,
    retrySchedule: notifCfg.WEBHOOK_RETRY_SCHEDULE,
    attemptTimeoutMs: notifCfg.WEBHOOK_ATTEMPT_TIMEOUT_MS,
    concurrency: notifCfg.WEBHOOK_CONCURRENCY,
    pollMs: notifCfg.WEBHOOK_POLL_MS,
    allowPrivate: notifCfg.WEBHOOK_ALLOW_PRIVATE,
    allowedPorts: notifCfg.WEBHOOK_ALLOWED_PORTS,
    secretOverlapMs: notifCfg.WEBHOOK_SECRET_OVERLAP_MS,
    watch: { fanoutMax: notifCfg.WATCH_FANOUT_MAX, perAgent: notifCfg.WATCHES_PER_AGENT },
  });
  const at = (port: number) => `127.0.0.1:${port}`;
  // Keyed by the one service list (docs/adr/0105): a service missing here fails the type check.
  const started = { forum, knowledge, translation, identity, council, notifications } satisfies Record<
    ServiceName,
    { port: number; stop(): Promise<void> }
  >;
  const grpcAddrs = Object.fromEntries(SERVICES.map((s) => [grpcAddrEnv(s.name), at(started[s.name].port)])) as Record<
    GrpcAddrEnv,
    string
  >;
  const local = {
    identity: identity.local,
    forum: forum.local,
    council: council.local,
    knowledge: knowledge.local,
    translation: translation.local,
    notifications: notifications.local,
  } satisfies Record<ServiceName, unknown>;
  // The gateway invalidates its caches from the same bus (its own NATS connection when NATS_URL is set).
  const gateway = await startGateway({ ...gwCfg, ...grpcAddrs }, log.child({ service: "gateway" }), { bus, local });
  return {
    baseUrl: gateway.baseUrl,
    port: gateway.port,
    databaseUrl: env.DATABASE_URL!,
    grpcAddrs,
    local,
    stop: async () => {
      await gateway.stop();
      // reverse start order: a service stops after everything that calls it
      for (const s of [...SERVICES].reverse()) await started[s.name].stop();
      for (const d of [idDeps, forumDeps, councilDeps, notifDeps]) if (d.bus !== bus) await d.bus.close();
      if (kBus !== bus) await kBus.close();
      await kDb?.close();
      await bus.close();
      await embedded?.stop();
    },
  };
}
