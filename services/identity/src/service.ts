import { fileURLToPath } from "node:url";
import { ForumClient, migrate, OutboxRelay, PLATFORM_MIGRATIONS_DIR, readinessProbe, startGrpcServer, systemClock, type Clock, type ServiceDeps } from "@aps/platform";
import { identity } from "@aps/proto";
import { IdentityRepository } from "./store/repository.js";
import { IdempotencyStore } from "./store/idempotency.js";
import { identityHandlers } from "./grpc/handlers.js";
import { consumeCaseClosed } from "./events/sagacity.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/** What `startIdentity` needs beyond the shared deps. */
export interface IdentityOptions {
  listenAddr: string;
  /** Forum gRPC address (votes as they stood at a case's close, for Sagacity). */
  forumAddr: string;
  joinsPerSourcePerDay: number;
  clock?: Clock;
}

/** A running identity service. */
export interface IdentityHandle {
  port: number;
  repo: IdentityRepository;
  stop(): Promise<void>;
}

/**
 * Starts the identity service on `deps`: applies migrations, serves gRPC (+ health) on
 * `opts.listenAddr`, relays its outbox to the bus, and awards Sagacity from `council.case_closed`. `stop()` drains gRPC, the relay, then
 * closes the database (the bus is the caller's).
 */
export async function startIdentity(deps: ServiceDeps, opts: IdentityOptions): Promise<IdentityHandle> {
  await migrate(deps.db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], deps.log);
  const relay = new OutboxRelay(deps.db.pool, deps.bus, deps.log);
  const repo = new IdentityRepository(deps.db.pool, opts.clock ?? systemClock, opts.joinsPerSourcePerDay, () => relay.notify());
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [{ name: "aps.identity.v1.IdentityService", definition: identity.IdentityServiceService, implementation: identityHandlers(repo, new IdempotencyStore(deps.db.pool, opts.clock ?? systemClock), deps.log) }],
    deps.log,
    // Readiness: NOT_SERVING while the service's PostgreSQL does not answer (docs/adr/0075).
    { probe: readinessProbe(deps.db) },
  );
  const forum = new ForumClient(opts.forumAddr);
  const sagacity = await consumeCaseClosed(deps.bus, deps.db.pool, forum);
  relay.start();
  return {
    port: grpc.port,
    repo,
    stop: async () => {
      await sagacity.stop();
      forum.close();
      await grpc.shutdown();
      await relay.stop();
      await deps.db.close();
    },
  };
}
