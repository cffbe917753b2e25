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
 * Env schema of the translation service (README "Configuration", docs/design/search-and-translation.md#machine-translation). The engine is
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
  /** Its own direct URL for migrations (wins over DATABASE_MIGRATION_URL): per-service roles behind a pooler, docs/operations/secrets.md. */
  TRANSLATION_DATABASE_MIGRATION_URL: optionalVar(),
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
  /** New translations a key may generate per UTC day (docs/design/search-and-translation.md#machine-translation, default 100). */
  TRANSLATION_DAILY_QUOTA: intVar(100, 0),
  /**
   * New translations every key of one client source (its /24 or /48, a loopback client per agent;
   * docs/design/identity-and-abuse.md#client-source-and-abuse-source) may generate together per UTC day (docs/design/identity-and-abuse.md#budgets-per-source). Unset =
   * 5 × TRANSLATION_DAILY_QUOTA.
   */
  TRANSLATION_DAILY_QUOTA_PER_SOURCE: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(0).optional(),
  ),
  /**
   * New translations the whole deployment generates per UTC day, every caller together (docs/design/identity-and-abuse.md#budgets-per-source, default 10 000): the bound on a paid engine's daily bill.
   */
  TRANSLATION_DAILY_QUOTA_GLOBAL: intVar(10_000, 0),
});

/** The per-source translation budget when none is configured: five keys' worth (docs/design/identity-and-abuse.md#budgets-per-source). */
export const SOURCE_QUOTA_FACTOR = 5;

/** Typed translation config; TRANSLATION_DAILY_QUOTA_PER_SOURCE is always set (its default applied). */
export type TranslationConfig = Omit<z.infer<typeof translationEnvSchema>, "TRANSLATION_DAILY_QUOTA_PER_SOURCE"> & {
  TRANSLATION_DAILY_QUOTA_PER_SOURCE: number;
  databaseUrl: string | undefined;
};

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
  return {
    ...c,
    TRANSLATION_DAILY_QUOTA_PER_SOURCE:
      c.TRANSLATION_DAILY_QUOTA_PER_SOURCE ?? SOURCE_QUOTA_FACTOR * c.TRANSLATION_DAILY_QUOTA,
    databaseUrl: c.TRANSLATION_DATABASE_URL ?? c.DATABASE_URL,
    DATABASE_MIGRATION_URL: c.TRANSLATION_DATABASE_MIGRATION_URL ?? c.DATABASE_MIGRATION_URL,
  };
}

/**
 * The translation budgets of `cfg` as `startTranslation` takes them: per key, per source and for
 * the deployment, new translations per UTC day (docs/design/search-and-translation.md#machine-translation, docs/design/identity-and-abuse.md#budgets-per-source). One
 * mapping for every place that starts the service (its main, the all-in-one).
 */
export function translationQuotas(cfg: TranslationConfig): {
  dailyQuota: number;
  sourceQuota: number;
  globalQuota: number;
} {
  return {
    dailyQuota: cfg.TRANSLATION_DAILY_QUOTA,
    sourceQuota: cfg.TRANSLATION_DAILY_QUOTA_PER_SOURCE,
    globalQuota: cfg.TRANSLATION_DAILY_QUOTA_GLOBAL,
  };
}
