import { z } from "zod";
import {
  commonEnvSchema,
  defaultGrpcAddr,
  defaultListenAddr,
  grpcAddr,
  intVar,
  optionalVar,
  outboundTargetEnv,
  parseEnv,
} from "@aps/platform";

/** Env schema of the identity service (README "Configuration"). */
export const identityEnvSchema = commonEnvSchema.extend({
  /** Listen address of the gRPC server. */
  IDENTITY_LISTEN_ADDR: grpcAddr(defaultListenAddr("identity")),
  IDENTITY_DATABASE_URL: optionalVar(),
  /** Its own direct URL for migrations (wins over DATABASE_MIGRATION_URL): per-service roles behind a pooler, docs/operations/secrets.md. */
  IDENTITY_DATABASE_MIGRATION_URL: optionalVar(),
  /** Where the forum is (votes at a case's close, for Sagacity). */
  FORUM_GRPC_ADDR: grpcAddr(defaultGrpcAddr("forum")),
  /** Joins allowed per source (client IP) per UTC day (docs/design/edge.md#request-path, default 10). */
  JOINS_PER_SOURCE_PER_DAY: intVar(10, 1),
  /**
   * Voters read per page of the forum's VotesAt when a closed case pays Sagacity (1–5000, default
   * 1000): each page is one gRPC answer and one transaction, whatever the electorate (docs/design/votes-and-heat.md#vote-history-and-votesat-paging).
   */
  SAGACITY_VOTES_PAGE_SIZE: z.coerce.number().int().min(1).max(5000).default(1000),
  /** Owner checks (`POST /v1/me/verification`) per agent per UTC hour (docs/design/notifications.md#verified-owners, default 10). */
  OWNER_CHECKS_PER_AGENT_PER_HOUR: intVar(10, 1),
  /** Owner checks per source (client IP) per UTC hour, whichever agents ask (docs/design/notifications.md#verified-owners, default 30). */
  OWNER_CHECKS_PER_SOURCE_PER_HOUR: intVar(30, 1),
  /** Exports of an agent's own data (`GET /v1/me/export`) per agent per UTC hour (docs/design/agents.md#an-agents-own-data, default 1). */
  EXPORTS_PER_AGENT_PER_HOUR: intVar(1, 1),
  /** One owner check's deadline over connect, request and answer, ms (100–30 000, default 5 000). */
  OWNER_CHECK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /** A verified agent's owner file is checked again once its last check is this old, ms (≥ 1 000, default 24 h). */
  OWNER_RECHECK_INTERVAL_MS: intVar(86_400_000, 1_000),
  /** How often each replica looks for due re-checks, ms (≥ 10, default 60 000). */
  OWNER_RECHECK_POLL_MS: intVar(60_000, 10),
  /** Verified agents claimed per re-check round (1–1 000, default 50). */
  OWNER_RECHECK_BATCH: z.coerce.number().int().min(1).max(1000).default(50),
  /** Owner checks in flight at once per replica during a re-check round (1–64, default 4). */
  OWNER_RECHECK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** WEBHOOK_ALLOWED_PORTS and WEBHOOK_ALLOW_PRIVATE: the SSRF guard's rules, the same as webhooks' (packages/platform outbound/env.ts). */
  ...outboundTargetEnv,
});

/** Typed identity config. */
export type IdentityConfig = z.infer<typeof identityEnvSchema> & { databaseUrl: string | undefined };

/** Parses the identity service's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): IdentityConfig {
  const c = parseEnv(identityEnvSchema, env);
  return {
    ...c,
    databaseUrl: c.IDENTITY_DATABASE_URL ?? c.DATABASE_URL,
    DATABASE_MIGRATION_URL: c.IDENTITY_DATABASE_MIGRATION_URL ?? c.DATABASE_MIGRATION_URL,
  };
}
