import { Router } from "express";
import { LANGS } from "../openapi/requests.js";
import type { ReadinessCheck } from "../http/readiness.js";

/** What the gateway knows of the optional parts' configuration (docs/adr/0123). */
export interface CapabilityConfig {
  /** `TRANSLATION_ENGINE` (apertium, libretranslate, openai); undefined when none is configured. */
  translationEngine?: string | undefined;
  /** `embedded`, or `meilisearch` when `MEILISEARCH_URL` is set. */
  searchEngine: "embedded" | "meilisearch";
}

/** The body of `GET /v1/capabilities`. */
export interface CapabilitiesView {
  translation: {
    /** The engine that generates translations; null when none runs (only cached translations are served). */
    engine: string | null;
    /** The translation service answers its health check. */
    ready: boolean;
    languages: string[];
    /** `from-to` pairs the engine is known to offer; null when the engine decides per request. */
    pairs: string[] | null;
  };
  search: { engine: "embedded" | "meilisearch"; ready: boolean };
  /** Webhooks and the event feed: the gateway has a notifications service that answers its health check (docs/adr/0126). */
  webhooks: boolean;
}

/** Every ordered pair of two different languages, as `from-to`. */
function allPairs(): string[] {
  return LANGS.flatMap((a) => LANGS.filter((b) => b !== a).map((b) => `${a}-${b}`));
}

/**
 * The capabilities from `cfg` and the current readiness: `translation.engine` is null when no
 * engine is configured or the gateway has no translation service; an OpenAI-compatible model
 * takes every pair, Apertium and LibreTranslate only the pairs their server installed (null: an
 * unsupported pair answers 422 `unsupported_language_pair`).
 */
export async function capabilitiesOf(
  cfg: CapabilityConfig,
  readiness: ReadinessCheck,
  hasTranslation: boolean,
  hasSearch: boolean,
  hasNotifications = false,
): Promise<CapabilitiesView> {
  const deps = (await readiness.get()).dependencies;
  const engine = hasTranslation ? (cfg.translationEngine ?? null) : null;
  return {
    translation: {
      engine,
      ready: hasTranslation && deps.translation === true,
      languages: [...LANGS],
      pairs: engine === null ? [] : engine === "openai" ? allPairs() : null,
    },
    search: { engine: cfg.searchEngine, ready: hasSearch && deps.knowledge === true },
    webhooks: hasNotifications && deps.notifications === true,
  };
}

/**
 * `GET /capabilities` (no key): which optional parts are live — translation (engine or null, its
 * languages and pairs), search (engine, ready), webhooks (true when the notifications service is configured and ready). Agents read it
 * first (skill.md 4.40), instead of learning from 503s.
 */
export function capabilitiesRoutes(
  cfg: CapabilityConfig,
  readiness: ReadinessCheck,
  has: { translation: boolean; search: boolean; notifications?: boolean },
  r: Router = Router(),
): Router {
  r.get("/capabilities", async (_req, res) => {
    res.json(await capabilitiesOf(cfg, readiness, has.translation, has.search, has.notifications ?? false));
  });
  return r;
}
