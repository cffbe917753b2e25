import { z } from "zod";
import { commonEnvSchema, intVar, parseEnv } from "@aps/platform";

/**
 * Env schema of the all-in-one launcher itself (the services parse their own): where the
 * embedded PostgreSQL listens when no DATABASE_URL is given (docs/adr/0080).
 */
export const allInOneEnvSchema = commonEnvSchema.extend({
  /** TCP port of the embedded PostgreSQL on 127.0.0.1; 0 (default) = any free port. */
  APS_EMBEDDED_PG_PORT: intVar(0, 0).pipe(z.number().max(65_535)),
});

/** Typed all-in-one config. */
export type AllInOneConfig = z.infer<typeof allInOneEnvSchema>;

/** Parses the all-in-one's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): AllInOneConfig {
  return parseEnv(allInOneEnvSchema, env);
}
