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

/**
 * Env schema of the translation service (README "Configuration", docs/architecture.md §7). The engine is
 * chosen by `TRANSLATION_ENGINE`; each engine reads its own variables:
 * - `apertium`: `APERTIUM_URL` (APY HTTP server, e.g. http://127.0.0.1:2737);
 * - `libretranslate`: `LIBRETRANSLATE_URL`, optional `LIBRETRANSLATE_API_KEY`;
 * - `openai`: `OPENAI_BASE_URL` (…/v1), `OPENAI_API_KEY`, `OPENAI_MODEL`;
 * - unset: no engine: generation answers 503 `upstream_unavailable`, cache reads still work.
 */
export const translationEnvSchema = commonEnvSchema.extend({
  /** Listen address of the gRPC server (default port 50055). */
  TRANSLATION_LISTEN_ADDR: grpcAddr(defaultListenAddr("translation")),
  TRANSLATION_DATABASE_URL: optionalVar(),
  /** The forum, read for post text. */
  FORUM_GRPC_ADDR: grpcAddr(defaultGrpcAddr("forum")),
  /** Engine kind; unset or "" = none. */
  TRANSLATION_ENGINE: z
    .enum(["apertium", "libretranslate", "openai", ""])
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  APERTIUM_URL: optionalVar(),
  LIBRETRANSLATE_URL: optionalVar(),
  /** Secret: never logged. */
  LIBRETRANSLATE_API_KEY: optionalVar(),
  OPENAI_BASE_URL: optionalVar(),
  /** Secret: never logged. */
  OPENAI_API_KEY: optionalVar(),
  OPENAI_MODEL: z.string().min(1).default("gpt-4o-mini"),
  /** Timeout of one engine HTTP request, milliseconds (default 20 000). */
  TRANSLATION_TIMEOUT_MS: intVar(20_000, 1),
  /** New translations a key may generate per UTC day (docs/architecture.md §7, default 100). */
  TRANSLATION_DAILY_QUOTA: intVar(100, 0),
});

/** Typed translation config. */
export type TranslationConfig = z.infer<typeof translationEnvSchema> & { databaseUrl: string | undefined };

/**
 * Parses the translation service's config from `env`; throws listing every bad variable, and
 * when the chosen engine lacks its URL (`APERTIUM_URL`, `LIBRETRANSLATE_URL`, `OPENAI_BASE_URL`).
 */
export function loadConfig(env: NodeJS.ProcessEnv): TranslationConfig {
  const c = parseEnv(translationEnvSchema, env);
  const need: Record<string, string | undefined> = {
    apertium: c.APERTIUM_URL,
    libretranslate: c.LIBRETRANSLATE_URL,
    openai: c.OPENAI_BASE_URL,
  };
  const varOf: Record<string, string> = {
    apertium: "APERTIUM_URL",
    libretranslate: "LIBRETRANSLATE_URL",
    openai: "OPENAI_BASE_URL",
  };
  if (c.TRANSLATION_ENGINE && !need[c.TRANSLATION_ENGINE]) {
    throw new Error(
      `invalid configuration:\n  ${varOf[c.TRANSLATION_ENGINE]}: required when TRANSLATION_ENGINE=${c.TRANSLATION_ENGINE}`,
    );
  }
  return { ...c, databaseUrl: c.TRANSLATION_DATABASE_URL ?? c.DATABASE_URL };
}
