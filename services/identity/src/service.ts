import { fileURLToPath } from "node:url";
import {
  ForumClient,
  migrate,
  OutboxRelay,
  PLATFORM_MIGRATIONS_DIR,
  readinessProbe,
  startGrpcServer,
  systemClock,
  type Clock,
  type LocalEndpoint,
  type ServiceDeps,
  type ServiceTarget,
} from "@aps/platform";
import { identity, type forum } from "@aps/proto";
import { IdentityRepository } from "./store/repository.js";
import { IdempotencyStore } from "./store/idempotency.js";
import { identityHandlers } from "./grpc/handlers.js";
import { consumeCaseClosed } from "./events/sagacity.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/** What `startIdentity` needs beyond the shared deps. */
export interface IdentityOptions {
  listenAddr: string;
  /** The forum (votes as they stood at a case's close, for Sagacity): its gRPC address, or in the all-in-one its in-process endpoint. */
  forumAddr: ServiceTarget<typeof forum.ForumServiceDefinition>;
  joinsPerSourcePerDay: number;
  clock?: Clock;
}

/** A running identity service. */
export interface IdentityHandle {
  port: number;
  repo: IdentityRepository;
  /** The service in-process, for the clients of the all-in-one (docs/adr/0085-local-transport-in-the-all-in-one.md). */
  local: LocalEndpoint<typeof identity.IdentityServiceDefinition>;
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
  const repo = new IdentityRepository(deps.db.pool, opts.clock ?? systemClock, opts.joinsPerSourcePerDay, () =>
    relay.notify(),
  );
  const implementation = identityHandlers(
    repo,
    new IdempotencyStore(deps.db.pool, opts.clock ?? systemClock),
    deps.log,
  );
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [{ name: "aps.identity.v1.IdentityService", definition: identity.IdentityServiceService, implementation }],
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
    local: grpc.local(identity.IdentityServiceDefinition, implementation),
    stop: async () => {
      await sagacity.stop();
      forum.close();
      await grpc.shutdown();
      await relay.stop();
      await deps.db.close();
    },
  };
}
