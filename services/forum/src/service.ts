import { fileURLToPath } from "node:url";
import {
  migrate,
  OutboxRelay,
  PLATFORM_MIGRATIONS_DIR,
  readinessProbe,
  startGrpcServer,
  systemClock,
  type Clock,
  type LocalEndpoint,
  type ServiceDeps,
} from "@aps/platform";
import { forum } from "@aps/proto";
import { ForumRepository, type ForumLimits } from "./store/repository.js";
import { forumHandlers } from "./grpc/handlers.js";
import { consumeCouncilEvents } from "./events/consumers.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/** What `startForum` needs beyond the shared deps. */
export interface ForumOptions {
  listenAddr: string;
  limits: ForumLimits;
  clock?: Clock;
}

/** A running forum service. */
export interface ForumHandle {
  port: number;
  repo: ForumRepository;
  /** The service in-process, for the clients of the all-in-one (docs/adr/0085-local-transport-in-the-all-in-one.md). */
  local: LocalEndpoint<typeof forum.ForumServiceDefinition>;
  stop(): Promise<void>;
}

/**
 * Starts the forum service on `deps`: migrations, gRPC (+ health) on `opts.listenAddr`, and the
 * outbox relay, and the status projection of council events. `stop()` drains gRPC and the relay, then closes the database.
 */
export async function startForum(deps: ServiceDeps, opts: ForumOptions): Promise<ForumHandle> {
  await migrate(deps.db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], deps.log);
  const relay = new OutboxRelay(deps.db.pool, deps.bus, deps.log);
  const repo = new ForumRepository(deps.db.pool, opts.clock ?? systemClock, opts.limits, () => relay.notify());
  const implementation = forumHandlers(repo, deps.log);
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [{ name: "aps.forum.v1.ForumService", definition: forum.ForumServiceService, implementation }],
    deps.log,
    // Readiness: NOT_SERVING while the service's PostgreSQL does not answer (docs/adr/0075).
    { probe: readinessProbe(deps.db) },
  );
  const statusProjection = await consumeCouncilEvents(deps.bus, deps.db.pool, repo);
  relay.start();
  return {
    port: grpc.port,
    repo,
    local: grpc.local(forum.ForumServiceDefinition, implementation),
    stop: async () => {
      await statusProjection.stop();
      await grpc.shutdown();
      await relay.stop();
      await deps.db.close();
    },
  };
}
