import {
  startService,
  systemClock,
  type Clock,
  type LocalEndpoint,
  type RetentionRule,
  type RetentionSettings,
  type ServiceDeps,
  startWithServiceDeps,
  type ApsGrpcService,
  migrateSchema,
  PLATFORM_MIGRATIONS_DIR,
} from "@aps/platform";
import { forum } from "@aps/proto";
import { forumLimits, loadConfig, type ForumConfig } from "./config.js";
import { ForumRepository, type ForumLimits } from "./store/repository.js";
import { forumHandlers } from "./grpc/handlers.js";
import { consumeCaseSummaries, consumeCouncilEvents } from "./events/status.js";
import { FlagStore } from "./store/flags.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./store/paths.js";

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
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<typeof forum.ForumServiceDefinition>;
  stop(): Promise<void>;
}

/**
 * Retention of the forum tables that only grow (docs/retention.md, docs/design/operations.md#retention):
 * per-day counters of days before RETENTION_DAILY_COUNTERS (only today's are read), flag
 * penalties expired RETENTION_EXPIRED ago, and superseded vote history: a vote_events row older
 * than RETENTION_VOTE_HISTORY goes when a newer row of the same voter and post is also older than
 * that, so `votesAt(post, at)` answers the same for every `at` inside the retention (the last vote
 * before it is kept). Posts, comments, revisions, flags and votes are content or state: kept.
 */
export function forumRetentionRules(s: RetentionSettings): RetentionRule[] {
  return [
    { table: "daily_counters", column: "day", columnType: "date", olderThanMs: s.dailyCountersMs },
    { table: "flag_penalties", column: "until", olderThanMs: s.expiredMs },
    {
      table: "vote_events",
      column: "cast_at",
      olderThanMs: s.voteHistoryMs,
      where:
        "EXISTS (SELECT 1 FROM vote_events n WHERE n.post_id = t.post_id AND n.agent_id = t.agent_id AND n.seq > t.seq AND n.cast_at < $1)",
    },
  ];
}

/**
 * Starts the forum service on `deps`: migrations and its SQL functions (docs/design/services.md#sql-functions-in-files), gRPC (+ health) on `opts.listenAddr`, and the
 * outbox relay, and the status projection of council events. `stop()` drains gRPC and the relay, then closes the database.
 */
export async function startForum(deps: ServiceDeps, opts: ForumOptions): Promise<ForumHandle> {
  return startService(deps, {
    migrationsDir: MIGRATIONS_DIR,
    functionsDir: FUNCTIONS_DIR,
    listenAddr: opts.listenAddr,
    service: { grpc: forum.ForumServiceService, generic: forum.ForumServiceDefinition },
    repository: (wake) => new ForumRepository(deps.db.pool, opts.clock ?? systemClock, opts.limits, wake),
    handlers: (repo) =>
      forumHandlers(
        repo,
        deps.log,
        new FlagStore(
          deps.db.pool,
          opts.clock ?? systemClock,
          repo.outbox,
          opts.limits.flagHideThreshold ?? 3,
          opts.limits.flagsPerDay,
        ),
      ),
    background: async (repo) => [
      await consumeCouncilEvents(deps.bus, deps.db.pool, repo),
      await consumeCaseSummaries(deps.bus, repo),
    ],
    retention: forumRetentionRules,
  });
}

/**
 * The forum as every launcher runs it (docs/design/services.md#one-service-contract): its config mapped to {@link ForumOptions}
 * once (its limits by forumLimits).
 */
export const forumService: ApsGrpcService<"forum", ForumConfig> = {
  name: "forum",
  loadConfig,
  migrate: ({ cfg, log }) => migrateSchema("forum", cfg, log, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], FUNCTIONS_DIR),
  start: (ctx) =>
    startWithServiceDeps("forum", ctx, (deps) =>
      startForum(deps, {
        listenAddr: ctx.listenAddr ?? ctx.cfg.FORUM_LISTEN_ADDR,
        clock: ctx.clock,
        limits: forumLimits(ctx.cfg),
      }),
    ),
};
