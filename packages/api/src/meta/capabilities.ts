import type { TemplateEnforcement } from "../posts/templates.js";
import { LANGS } from "../openapi/requests.js";

/** What the gateway knows of the optional parts' configuration (docs/design/agents.md#discovery). */
export interface CapabilityConfig {
  /** `TRANSLATION_ENGINE` (apertium, libretranslate, openai); undefined when none is configured. */
  translationEngine?: string | undefined;
  /** `embedded`, or `meilisearch` when `MEILISEARCH_URL` is set. */
  searchEngine: "embedded" | "meilisearch";
  /** `PROPOSAL_TEMPLATE` (docs/reference/proposing.md "Templates"); undefined = `advisory`. */
  proposalTemplate?: TemplateEnforcement | undefined;
}

/**
 * The gateway's readiness as `GET /capabilities` reads it (http/readiness.ts `ReadinessCheck`,
 * docs/design/operations.md#health-and-readiness): each dependency by name, true when its health check answered SERVING.
 */
export interface ReadinessSource {
  get(): Promise<{ dependencies: Record<string, boolean> }>;
}

/** The body of `GET /v1/capabilities`. */
export interface CapabilitiesView {
  translation: {
    /** The engine that generates translations; null when none runs (only cached translations are served). */
    engine: string | null;
    /** The translation service answers its health check. */
    ready: boolean;
    /** Languages the engine translates from or to (every API language when no engine runs, or it cannot say). */
    languages: string[];
    /** `from-to` pairs the running engine offers; null when the engine decides per request or cannot be asked now. */
    pairs: string[] | null;
  };
  search: { engine: "embedded" | "meilisearch"; ready: boolean };
  /** Webhooks and the event feed: the gateway has a notifications service that answers its health check (docs/design/notifications.md#webhook-registration-and-signing). */
  webhooks: boolean;
}

/** Every ordered pair of two different languages, as `from-to`. */
function allPairs(): string[] {
  return LANGS.flatMap((a) => LANGS.filter((b) => b !== a).map((b) => `${a}-${b}`));
}

/** What the translation service says of its engine's pairs (its `ListPairs` answer). */
export interface EnginePairs {
  everyPair: boolean;
  pairs: string[];
  /** False when the engine cannot list its pairs. */
  known: boolean;
}

/**
 * The capabilities from `cfg` and the current readiness: `translation.engine` is null when no
 * engine is configured or the gateway has no translation service. The pairs are the running
 * engine's own (docs/design/edge.md#index-405-and-404), asked of the translation service (`listPairs`):
 * every pair for an OpenAI-compatible model, Apertium's installed pairs; null when the engine
 * cannot list them or cannot be asked now (an unsupported pair answers 422
 * `unsupported_language_pair`). `languages` are those the pairs name.
 */
export async function capabilitiesOf(
  cfg: CapabilityConfig,
  readiness: ReadinessSource,
  hasTranslation: boolean,
  hasSearch: boolean,
  hasNotifications = false,
  listPairs?: () => Promise<EnginePairs>,
): Promise<CapabilitiesView> {
  const deps = (await readiness.get()).dependencies;
  const engine = hasTranslation ? (cfg.translationEngine ?? null) : null;
  const offered = engine === null || !listPairs ? undefined : await listPairs().catch(() => undefined);
  const pairs =
    engine === null
      ? []
      : offered?.everyPair || (!offered && engine === "openai")
        ? allPairs()
        : offered?.known
          ? offered.pairs
          : null;
  return {
    translation: {
      engine,
      ready: hasTranslation && deps.translation === true,
      languages:
        pairs === null || pairs.length === 0
          ? [...LANGS]
          : LANGS.filter((l) => pairs.some((p) => p.startsWith(`${l}-`) || p.endsWith(`-${l}`))),
      pairs,
    },
    search: { engine: cfg.searchEngine, ready: hasSearch && deps.knowledge === true },
    webhooks: hasNotifications && deps.notifications === true,
  };
}
