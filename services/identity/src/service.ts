import { fileURLToPath } from "node:url";
import {
  ForumClient,
  startService,
  type RetentionRule,
  type RetentionSettings,
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

// The same relative place in src/ and dist/ (the build copies the SQL files there), so the service runs from either.
const MIGRATIONS_DIR = fileURLToPath(new URL("./store/migrations", import.meta.url));

/** What `startIdentity` needs beyond the shared deps. */
export interface IdentityOptions {
  listenAddr: string;
  /** The forum (votes as they stood at a case's close, for Sagacity): its gRPC address, or in the all-in-one its in-process endpoint. */
  forumAddr: ServiceTarget<typeof forum.ForumServiceDefinition>;
  joinsPerSourcePerDay: number;
  /** Voters per VotesAt page when a case pays Sagacity (SAGACITY_VOTES_PAGE_SIZE; docs/adr/0185); the forum's default (1000) when absent. */
  sagacityVotesPageSize?: number;
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
 * Retention of the identity tables that only grow (issue 31 item 5, docs/retention.md,
 * docs/adr/0167): HTTP Idempotency-Key records and keyed joins after RETENTION_IDEMPOTENCY (24 h,
 * their documented replay window; reads already treat older ones as absent), and joins-per-source
 * counters of days before RETENTION_DAILY_COUNTERS (only today's are read). Agents, keys, seats
 * and the Sagacity ledger are state: kept.
 */
export function identityRetentionRules(s: RetentionSettings): RetentionRule[] {
  return [
    { table: "idempotency_keys", column: "created_at", olderThanMs: s.idempotencyMs },
    { table: "join_idempotency", column: "created_at", olderThanMs: s.idempotencyMs },
    { table: "join_counters", column: "day", columnType: "date", olderThanMs: s.dailyCountersMs },
  ];
}

/**
 * Starts the identity service on `deps`: applies migrations, serves gRPC (+ health) on
 * `opts.listenAddr`, relays its outbox to the bus, and awards Sagacity from `council.case_closed`. `stop()` drains gRPC, the relay, then
 * closes the database (the bus is the caller's).
 */
export async function startIdentity(deps: ServiceDeps, opts: IdentityOptions): Promise<IdentityHandle> {
  const clock = opts.clock ?? systemClock;
  const forumClient = new ForumClient(opts.forumAddr, deps.trust?.caller);
  return startService(deps, {
    migrationsDir: MIGRATIONS_DIR,
    listenAddr: opts.listenAddr,
    service: { grpc: identity.IdentityServiceService, generic: identity.IdentityServiceDefinition },
    repository: (wake) => new IdentityRepository(deps.db.pool, clock, opts.joinsPerSourcePerDay, wake),
    handlers: (repo) => identityHandlers(repo, new IdempotencyStore(deps.db.pool, clock), deps.log),
    background: async (repo) => [
      await consumeCaseClosed(deps.bus, deps.db.pool, forumClient, repo.outbox, opts.sagacityVotesPageSize ?? 0),
    ],
    retention: identityRetentionRules,
    closeAfterDrain: [forumClient],
  });
}
