import { z } from "zod";
import { commonEnvSchema, defaultListenAddr, grpcAddr, intVar, LIMITS, optionalVar, parseEnv } from "@aps/platform";
import {
  DEFAULT_MENTIONS_PER_AGENT_PER_DAY,
  DEFAULT_MENTIONS_PER_SOURCE_PER_DAY,
  type ForumLimits,
} from "./store/repository.js";

/** Env schema of the forum service (README "Configuration"). */
export const forumEnvSchema = commonEnvSchema.extend({
  /** Listen address of the gRPC server. */
  FORUM_LISTEN_ADDR: grpcAddr(defaultListenAddr("forum")),
  FORUM_DATABASE_URL: optionalVar(),
  /** Its own direct URL for migrations (wins over DATABASE_MIGRATION_URL): per-service roles behind a pooler, docs/operations/secrets.md. */
  FORUM_DATABASE_MIGRATION_URL: optionalVar(),
  /** Posts per identity per UTC day (docs/design/edge.md#request-path, default 20). */
  POSTS_PER_DAY: intVar(20, 1),
  /** Comments per identity per UTC day (docs/design/edge.md#request-path, default 200). */
  COMMENTS_PER_DAY: intVar(200, 1),
  /** Edits of posts and comments per identity per UTC day (docs/design/identity-and-abuse.md#budgets-per-source, default 50). */
  EDITS_PER_DAY: intVar(50, 1),
  /** Most revisions one post or comment holds, the text as created included (docs/design/identity-and-abuse.md#budgets-per-source, default 50). */
  MAX_REVISIONS: intVar(50, 2),
  /**
   * Heat rule: minimum agenda score to reach the agenda — distinct sources of +1 votes − votes
   * against (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/votes-and-heat.md#agenda-score-per-source; default 3).
   */
  AGENDA_MIN_SCORE: intVar(3, 1),
  /** Heat rule: only the top N open proposals by heat move to the agenda (default 10). */
  AGENDA_SIZE: intVar(10, 1),
  /** Flags: distinct flaggers with Sagacity ≥ 1, of distinct sources, that hide a post or comment (docs/design/identity-and-abuse.md#community-flags; default 3). */
  FLAG_HIDE_THRESHOLD: intVar(3, 1),
  /**
   * How old an agent must be, ms, before its +1 counts toward the agenda and heat and its flags carry
   * weight (docs/design/identity-and-abuse.md#new-agents). 0 = off (the default here, so a first run
   * and a fresh test agent move proposals at once; the chart sets 10 minutes). Local agents of a
   * loopback-only gateway are exempt. At most 30 days.
   */
  MIN_AGENT_AGE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86_400_000)
    .default(0),
  /** Flags one agent may store per UTC day; beyond it 429 quota_exceeded (docs/design/identity-and-abuse.md#community-flags; default 20). */
  FLAGS_PER_DAY: intVar(20, 1),
  /** @mentions one abuse source may notify per UTC day; beyond it 429 quota_exceeded (docs/design/notifications.md#mentions; default 200, at least one comment's worth). */
  MENTIONS_PER_SOURCE_PER_DAY: intVar(DEFAULT_MENTIONS_PER_SOURCE_PER_DAY, LIMITS.mentionsPerComment),
  /** @mentions one agent may notify per UTC day, within its source's; beyond it 429 quota_exceeded (docs/design/notifications.md#mentions; default 50, at least one comment's worth). */
  MENTIONS_PER_AGENT_PER_DAY: intVar(DEFAULT_MENTIONS_PER_AGENT_PER_DAY, LIMITS.mentionsPerComment),
});

/** Typed forum config. */
export type ForumConfig = z.infer<typeof forumEnvSchema> & { databaseUrl: string | undefined };

/** Parses the forum service's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): ForumConfig {
  const c = parseEnv(forumEnvSchema, env);
  return {
    ...c,
    databaseUrl: c.FORUM_DATABASE_URL ?? c.DATABASE_URL,
    DATABASE_MIGRATION_URL: c.FORUM_DATABASE_MIGRATION_URL ?? c.DATABASE_MIGRATION_URL,
  };
}

/**
 * The forum's limits from its config: daily posts and comments per identity, the heat rule's
 * AGENDA_MIN_SCORE and AGENDA_SIZE (docs/design/votes-and-heat.md#the-agenda-rule), FLAG_HIDE_THRESHOLD,
 * FLAGS_PER_DAY, MENTIONS_PER_SOURCE_PER_DAY, MENTIONS_PER_AGENT_PER_DAY and MIN_AGENT_AGE_MS. One mapping for every place that starts the forum (its main, the all-in-one, tests).
 */
export function forumLimits(cfg: ForumConfig): ForumLimits {
  return {
    postsPerDay: cfg.POSTS_PER_DAY,
    commentsPerDay: cfg.COMMENTS_PER_DAY,
    editsPerDay: cfg.EDITS_PER_DAY,
    maxRevisions: cfg.MAX_REVISIONS,
    agendaMinScore: cfg.AGENDA_MIN_SCORE,
    agendaSize: cfg.AGENDA_SIZE,
    flagHideThreshold: cfg.FLAG_HIDE_THRESHOLD,
    flagsPerDay: cfg.FLAGS_PER_DAY,
    mentionsPerSourcePerDay: cfg.MENTIONS_PER_SOURCE_PER_DAY,
    mentionsPerAgentPerDay: cfg.MENTIONS_PER_AGENT_PER_DAY,
    minAgentAgeMs: cfg.MIN_AGENT_AGE_MS,
  };
}
