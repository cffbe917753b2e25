import { fileURLToPath } from "node:url";
import {
  apiKeyPrefix,
  DEFAULT_ALLOWED_PORTS,
  serviceClient,
  startService,
  type RetentionRule,
  type RetentionSettings,
  systemClock,
  type Clock,
  type LocalEndpoint,
  type ServiceDeps,
  type ServiceTarget,
  startWithServiceDeps,
  type ApsGrpcService,
  migrateSchema,
  PLATFORM_MIGRATIONS_DIR,
} from "@aps/platform";
import { identity, forum } from "@aps/proto";
import { loadConfig, type IdentityConfig } from "./config.js";
import { IdentityRepository } from "./store/repository.js";
import { identityHandlers } from "./grpc/handlers.js";
import { consumeCaseClosed } from "./events/sagacity.js";
import { OwnerVerifier, type OwnerVerificationOptions } from "./owner/verifier.js";

// The same relative place in src/ and dist/ (the build copies the SQL files there), so the service runs from either.
const MIGRATIONS_DIR = fileURLToPath(new URL("./store/migrations", import.meta.url));

/** What `startIdentity` needs beyond the shared deps. */
export interface IdentityOptions {
  /** APS_LIVEMODE: false in a sandbox instance, whose keys are `sk_test_…` (docs/design/agents.md#sandbox); default true. */
  livemode?: boolean;
  listenAddr: string;
  /** The forum (votes as they stood at a case's close, for Sagacity): its gRPC address, or in the all-in-one its in-process endpoint. */
  forumAddr: ServiceTarget<typeof forum.ForumServiceDefinition>;
  joinsPerSourcePerDay: number;
  /** Voters per VotesAt page when a case pays Sagacity (SAGACITY_VOTES_PAGE_SIZE; docs/design/votes-and-heat.md#vote-history-and-votesat-paging); the forum's default (1000) when absent. */
  sagacityVotesPageSize?: number;
  /** EXPORTS_PER_AGENT_PER_HOUR (GET /v1/me/export, docs/design/agents.md#an-agents-own-data); 1 when absent. */
  exportsPerHour?: number;
  /** Owner verification (docs/design/notifications.md#verified-owners): `ownerVerificationOf(config)`; the config's defaults when absent. */
  owners?: OwnerVerificationOptions;
  clock?: Clock;
}

/** The defaults of OWNER_* with the strict SSRF rules (no WEBHOOK_ALLOW_PRIVATE). */
export const DEFAULT_OWNER_VERIFICATION: OwnerVerificationOptions = {
  policy: { allowPrivate: false, allowedPorts: DEFAULT_ALLOWED_PORTS },
  deadlineMs: 5_000,
  limits: { perAgentPerHour: 10, perSourcePerHour: 30 },
  recheckIntervalMs: 86_400_000,
  recheckPollMs: 60_000,
  recheckBatch: 50,
  recheckConcurrency: 4,
};

/** The owner verification settings of an identity config (OWNER_*, WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS). */
export function ownerVerificationOf(c: IdentityConfig): OwnerVerificationOptions {
  return {
    policy: { allowPrivate: c.WEBHOOK_ALLOW_PRIVATE, allowedPorts: c.WEBHOOK_ALLOWED_PORTS },
    deadlineMs: c.OWNER_CHECK_TIMEOUT_MS,
    limits: {
      perAgentPerHour: c.OWNER_CHECKS_PER_AGENT_PER_HOUR,
      perSourcePerHour: c.OWNER_CHECKS_PER_SOURCE_PER_HOUR,
    },
    recheckIntervalMs: c.OWNER_RECHECK_INTERVAL_MS,
    recheckPollMs: c.OWNER_RECHECK_POLL_MS,
    recheckBatch: c.OWNER_RECHECK_BATCH,
    recheckConcurrency: c.OWNER_RECHECK_CONCURRENCY,
  };
}

/** A running identity service. */
export interface IdentityHandle {
  port: number;
  repo: IdentityRepository;
  /** Owner verification (docs/design/notifications.md#verified-owners): `recheckOnce()` runs a re-check round now. */
  owners: OwnerVerifier;
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<typeof identity.IdentityServiceDefinition>;
  stop(): Promise<void>;
}

/**
 * Retention of the identity tables that only grow (docs/retention.md,
 * docs/design/operations.md#retention): keyed joins after RETENTION_IDEMPOTENCY (24 h,
 * their documented replay window; reads already treat older ones as absent), and joins-per-source
 * counters of days before RETENTION_DAILY_COUNTERS (only today's are read). Agents, keys, seats
 * and the Sagacity ledger are state: kept.
 */
export function identityRetentionRules(s: RetentionSettings): RetentionRule[] {
  return [
    { table: "join_idempotency", column: "created_at", olderThanMs: s.idempotencyMs },
    { table: "join_counters", column: "day", columnType: "date", olderThanMs: s.dailyCountersMs },
    { table: "owner_check_counters", column: "hour", olderThanMs: s.dailyCountersMs },
  ];
}

/**
 * Starts the identity service on `deps`: applies migrations, serves gRPC (+ health) on
 * `opts.listenAddr`, relays its outbox to the bus, awards Sagacity from `council.case_closed` and
 * re-checks verified owners periodically (docs/design/notifications.md#verified-owners). `stop()` drains gRPC, the relay, then
 * closes the database (the bus is the caller's).
 */
export async function startIdentity(deps: ServiceDeps, opts: IdentityOptions): Promise<IdentityHandle> {
  const clock = opts.clock ?? systemClock;
  const forumClient = serviceClient(forum.ForumServiceDefinition, opts.forumAddr, {
    caller: deps.trust?.caller,
    deadlineMs: deps.callDeadlineMs,
  });
  let owners: OwnerVerifier | undefined;
  const svc = await startService(deps, {
    migrationsDir: MIGRATIONS_DIR,
    listenAddr: opts.listenAddr,
    service: { grpc: identity.IdentityServiceService, generic: identity.IdentityServiceDefinition },
    repository: (wake, relay) =>
      new IdentityRepository(
        deps.db.pool,
        clock,
        opts.joinsPerSourcePerDay,
        wake,
        relay,
        apiKeyPrefix(opts.livemode ?? true),
      ),
    handlers: (repo) => {
      owners = new OwnerVerifier(repo, opts.owners ?? DEFAULT_OWNER_VERIFICATION, deps.log);
      return identityHandlers(repo, deps.log, owners, { exportsPerHour: opts.exportsPerHour ?? 1 });
    },
    background: async (repo) => [
      await consumeCaseClosed(deps.bus, deps.db.pool, forumClient, repo.outbox, opts.sagacityVotesPageSize ?? 0),
      owners!.start(),
    ],
    retention: identityRetentionRules,
    closeAfterDrain: [forumClient],
  });
  return { ...svc, owners: owners! };
}

/**
 * The identity service as every launcher runs it (docs/design/services.md#one-service-contract): its config
 * (JOINS_PER_SOURCE_PER_DAY, SAGACITY_VOTES_PAGE_SIZE, owner verification by ownerVerificationOf)
 * mapped to {@link IdentityOptions} once. Warns when WEBHOOK_ALLOW_PRIVATE is on (owner checks).
 */
export const identityService: ApsGrpcService<"identity", IdentityConfig> = {
  name: "identity",
  loadConfig,
  migrate: ({ cfg, log }) => migrateSchema("identity", cfg, log, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR]),
  start: (ctx) =>
    startWithServiceDeps("identity", ctx, (deps) => {
      if (ctx.cfg.WEBHOOK_ALLOW_PRIVATE)
        deps.log.warn(
          "WEBHOOK_ALLOW_PRIVATE is on: owner checks may fetch http and private addresses (tests and local setups only)",
        );
      return startIdentity(deps, {
        listenAddr: ctx.listenAddr ?? ctx.cfg.IDENTITY_LISTEN_ADDR,
        clock: ctx.clock,
        livemode: ctx.cfg.APS_LIVEMODE,
        forumAddr: ctx.targets.forum,
        joinsPerSourcePerDay: ctx.cfg.JOINS_PER_SOURCE_PER_DAY,
        sagacityVotesPageSize: ctx.cfg.SAGACITY_VOTES_PAGE_SIZE,
        exportsPerHour: ctx.cfg.EXPORTS_PER_AGENT_PER_HOUR,
        owners: ownerVerificationOf(ctx.cfg),
      });
    }),
};
