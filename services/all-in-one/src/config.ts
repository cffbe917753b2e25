import { z } from "zod";
import { commonEnvSchema, intVar, optionalVar, parseEnv } from "@aps/platform";

/**
 * Env schema of the all-in-one launcher itself (the services parse their own): where the
 * embedded PostgreSQL listens when no DATABASE_URL is given (docs/design/services.md#embedded-postgresql), and whether it starts
 * Apertium APY itself (docs/design/search-and-translation.md#translation-engines).
 */
export const allInOneEnvSchema = commonEnvSchema.extend({
  /** TCP port of the embedded PostgreSQL on 127.0.0.1; 0 (default) = any free port. */
  APS_EMBEDDED_PG_PORT: intVar(0, 0).pipe(z.number().max(65_535)),
  /**
   * Test-only (docs/design/tests.md#template-databases): a folder holding a template cluster, copied into a data folder that has
   * no cluster yet instead of running initdb (made by a real initdb on first use). Unset: initdb.
   */
  APS_EMBEDDED_PG_TEMPLATE: z.string().min(1).optional(),
  /**
   * `auto` (default): with no TRANSLATION_ENGINE, start Apertium APY when `apertium-apy` is on the
   * PATH (docs/design/search-and-translation.md#translation-engines); `off`: never (the tests' systems, for a fixed set of engines).
   */
  APS_START_APERTIUM: z.enum(["auto", "off"]).default("auto"),
  /** Where the installed Apertium language pairs' `.mode` files are (Debian's packages put them here). */
  APS_APERTIUM_MODES: z.string().min(1).default("/usr/share/apertium/modes"),
  /**
   * `on`: run a sandbox beside the live instance in this process (docs/design/agents.md#sandbox) — the same services on
   * their own database, stream and test clock, reached through the live gateway with `sk_test_` keys.
   * `off` (default): none (the sandbox doubles the services' memory).
   */
  APS_SANDBOX: z.enum(["on", "off"]).default("off"),
  /** The sandbox's database (`on` only); default `aps_sandbox` on the embedded server, else `<database>_sandbox` beside DATABASE_URL's, created when missing. */
  APS_SANDBOX_DATABASE_URL: optionalVar(),
});

/** Typed all-in-one config. */
export type AllInOneConfig = z.infer<typeof allInOneEnvSchema>;

/** Parses the all-in-one's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): AllInOneConfig {
  return parseEnv(allInOneEnvSchema, env);
}
