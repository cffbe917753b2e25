import { openServiceDeps, type EventBus, type Logger } from "@aps/platform";
import { loadConfig as identityConfig, startIdentity } from "@aps/identity";
import { loadConfig as forumConfig, startForum } from "@aps/forum";
import { loadConfig as gatewayConfig, startGateway } from "@aps/gateway";

/** A running all-in-one APS. */
export interface AllInOne {
  baseUrl: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts every service in this process (DESIGN.md §3 "All-in-one"): each with its own database
 * (embedded PGlite under `APS_DATA_DIR/<service>` unless a DATABASE_URL is set), the given bus
 * (in-process unless NATS_URL is set), gRPC on loopback ports chosen by the OS, and the gateway
 * on `PORT`. The same `start*` functions run each service in the distributed mode.
 */
export async function startAllInOne(env: NodeJS.ProcessEnv, log: Logger, bus: EventBus): Promise<AllInOne> {
  const idCfg = identityConfig(env);
  const forumCfg = forumConfig(env);
  const gwCfg = gatewayConfig(env);
  const loopback = "127.0.0.1:0";

  const [idDeps, forumDeps] = await Promise.all([
    openServiceDeps("identity", idCfg, bus, log.child({ service: "identity" })),
    openServiceDeps("forum", forumCfg, bus, log.child({ service: "forum" })),
  ]);
  const [identity, forum] = await Promise.all([
    startIdentity(idDeps, { listenAddr: loopback, joinsPerSourcePerDay: idCfg.JOINS_PER_SOURCE_PER_DAY }),
    startForum(forumDeps, { listenAddr: loopback, limits: { postsPerDay: forumCfg.POSTS_PER_DAY, commentsPerDay: forumCfg.COMMENTS_PER_DAY } }),
  ]);
  const gateway = await startGateway(
    { ...gwCfg, IDENTITY_GRPC_ADDR: `127.0.0.1:${identity.port}`, FORUM_GRPC_ADDR: `127.0.0.1:${forum.port}` },
    log.child({ service: "gateway" }),
  );
  return {
    baseUrl: gateway.baseUrl,
    port: gateway.port,
    stop: async () => {
      await gateway.stop();
      await Promise.all([identity.stop(), forum.stop()]);
      if (idDeps.bus !== bus) await idDeps.bus.close();
      if (forumDeps.bus !== bus) await forumDeps.bus.close();
      await bus.close();
    },
  };
}
