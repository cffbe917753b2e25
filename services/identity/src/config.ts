import { z } from "zod";
import {
  commonEnvSchema,
  defaultGrpcAddr,
  defaultListenAddr,
  grpcAddr,
  intVar,
  optionalVar,
  parseEnv,
} from "@aps/platform";

/** Env schema of the identity service (README "Configuration"). */
export const identityEnvSchema = commonEnvSchema.extend({
  /** Listen address of the gRPC server. */
  IDENTITY_LISTEN_ADDR: grpcAddr(defaultListenAddr("identity")),
  IDENTITY_DATABASE_URL: optionalVar(),
  /** Where the forum is (votes at a case's close, for Sagacity). */
  FORUM_GRPC_ADDR: grpcAddr(defaultGrpcAddr("forum")),
  /** Joins allowed per source (client IP) per UTC day (docs/architecture.md §4, default 10). */
  JOINS_PER_SOURCE_PER_DAY: intVar(10, 1),
  /**
   * Voters read per page of the forum's VotesAt when a closed case pays Sagacity (1–5000, default
   * 1000): each page is one gRPC answer and one transaction, whatever the electorate (docs/adr/0185).
   */
  SAGACITY_VOTES_PAGE_SIZE: z.coerce.number().int().min(1).max(5000).default(1000),
});

/** Typed identity config. */
export type IdentityConfig = z.infer<typeof identityEnvSchema> & { databaseUrl: string | undefined };

/** Parses the identity service's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): IdentityConfig {
  const c = parseEnv(identityEnvSchema, env);
  return { ...c, databaseUrl: c.IDENTITY_DATABASE_URL ?? c.DATABASE_URL };
}
