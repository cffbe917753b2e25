import { join } from "node:path";
import { openDatabase, openServiceDeps, systemClock, type Clock, type EventBus, type Logger } from "@aps/platform";
import { loadConfig as identityConfig, startIdentity } from "@aps/identity";
import { loadConfig as forumConfig, startForum } from "@aps/forum";
import { loadConfig as councilConfig, startCouncil } from "@aps/council";
import { loadConfig as gatewayConfig, startGateway } from "@aps/gateway";
import { engineFromConfig, loadConfig as knowledgeConfig, openKnowledgeBus, startKnowledge } from "@aps/knowledge";
import { engineFromConfig as translationEngine, loadConfig as translationConfig, startTranslation } from "@aps/translation";

/** A running all-in-one APS. */
export interface AllInOne {
  baseUrl: string;
  port: number;
  /** Loopback gRPC addresses of the services, keyed by their env var (`FORUM_GRPC_ADDR`, …), for another gateway to use. */
  grpcAddrs: Record<"IDENTITY_GRPC_ADDR" | "FORUM_GRPC_ADDR" | "COUNCIL_GRPC_ADDR" | "KNOWLEDGE_GRPC_ADDR", string>;
  stop(): Promise<void>;
}

/** Test seams of the all-in-one. */
export interface AllInOneOptions {
  /** One clock for every service (tests drive Council deadlines with it). */
  clock?: Clock;
}

/**
 * Starts every service in this process (DESIGN.md §3 "All-in-one"): each with its own database
 * (embedded PGlite under `APS_DATA_DIR/<service>` unless a DATABASE_URL is set), the given bus
 * (in-process unless NATS_URL is set), gRPC on loopback ports chosen by the OS, and the gateway
 * on `PORT`. The same `start*` functions run each service in the distributed mode.
 * Start order follows the gRPC dependencies: forum → knowledge, translation → identity → council → gateway.
 * The translation engine comes from env (`TRANSLATION_ENGINE`…); without one the system still starts
 * and translation generation answers 503.
 */
export async function startAllInOne(env: NodeJS.ProcessEnv, log: Logger, bus: EventBus, opts: AllInOneOptions = {}): Promise<AllInOne> {
  const clock = opts.clock ?? systemClock;
  const idCfg = identityConfig(env);
  const forumCfg = forumConfig(env);
  const councilCfg = councilConfig(env);
  const gwCfg = gatewayConfig(env);
  const loopback = "127.0.0.1:0";

  const [idDeps, forumDeps, councilDeps] = await Promise.all([
    openServiceDeps("identity", idCfg, bus, log.child({ service: "identity" })),
    openServiceDeps("forum", forumCfg, bus, log.child({ service: "forum" })),
    openServiceDeps("council", councilCfg, bus, log.child({ service: "council" })),
  ]);
  const forum = await startForum(forumDeps, {
    listenAddr: loopback,
    clock,
    limits: { postsPerDay: forumCfg.POSTS_PER_DAY, commentsPerDay: forumCfg.COMMENTS_PER_DAY, agendaMinScore: forumCfg.AGENDA_MIN_SCORE, agendaSize: forumCfg.AGENDA_SIZE },
  });
  const forumAddr = `127.0.0.1:${forum.port}`;
  const kCfg = knowledgeConfig(env);
  const kLog = log.child({ service: "knowledge" });
  const kBus = await openKnowledgeBus(kCfg, kLog, bus);
  const knowledge = await startKnowledge(
    { bus: kBus, log: kLog },
    { listenAddr: loopback, forumAddr, engine: engineFromConfig(kCfg), docsDir: kCfg.KNOWLEDGE_DOCS_DIR },
  );
  const tCfg = translationConfig(env);
  const tLog = log.child({ service: "translation" });
  const tDb = await openDatabase({ url: tCfg.databaseUrl, embeddedDir: join(tCfg.APS_DATA_DIR, "translation"), schema: "translation", log: tLog });
  const translation = await startTranslation(
    { db: tDb, log: tLog },
    { listenAddr: loopback, forumAddr, clock, engine: translationEngine(tCfg), dailyQuota: tCfg.TRANSLATION_DAILY_QUOTA, timeoutMs: tCfg.TRANSLATION_TIMEOUT_MS },
  );
  const identity = await startIdentity(idDeps, { listenAddr: loopback, clock, forumAddr, joinsPerSourcePerDay: idCfg.JOINS_PER_SOURCE_PER_DAY });
  const identityAddr = `127.0.0.1:${identity.port}`;
  const council = await startCouncil(councilDeps, {
    listenAddr: loopback,
    clock,
    identityAddr,
    forumAddr,
    deadlineMs: councilCfg.COUNCIL_DEADLINE,
    tickMs: councilCfg.COUNCIL_TICK_MS,
  });
  const grpcAddrs = { IDENTITY_GRPC_ADDR: identityAddr, FORUM_GRPC_ADDR: forumAddr, COUNCIL_GRPC_ADDR: `127.0.0.1:${council.port}`, KNOWLEDGE_GRPC_ADDR: `127.0.0.1:${knowledge.port}`, TRANSLATION_GRPC_ADDR: `127.0.0.1:${translation.port}` };
  // The gateway invalidates its caches from the same bus (its own NATS connection when NATS_URL is set).
  const gateway = await startGateway({ ...gwCfg, ...grpcAddrs }, log.child({ service: "gateway" }), { bus });
  return {
    baseUrl: gateway.baseUrl,
    port: gateway.port,
    grpcAddrs,
    stop: async () => {
      await gateway.stop();
      await council.stop();
      await knowledge.stop();
      await translation.stop();
      await identity.stop();
      await forum.stop();
      for (const d of [idDeps, forumDeps, councilDeps]) if (d.bus !== bus) await d.bus.close();
      if (kBus !== bus) await kBus.close();
      await bus.close();
    },
  };
}
