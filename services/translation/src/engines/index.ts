import type { TranslationConfig } from "../config.js";
import { ApertiumEngine } from "./apertium.js";
import { LibreTranslateEngine } from "./libretranslate.js";
import { OpenAiEngine } from "./openai.js";
import type { TranslationEngine } from "./types.js";

export { ApertiumEngine, LibreTranslateEngine, OpenAiEngine };
export { EngineError, type TranslationEngine } from "./types.js";

/**
 * The engine `TRANSLATION_ENGINE` asks for, or undefined when it is unset (generation then
 * answers 503 `upstream_unavailable`). `loadConfig` has already checked that the URL is set.
 */
export function engineFromConfig(
  cfg: Pick<
    TranslationConfig,
    | "TRANSLATION_ENGINE"
    | "APERTIUM_URL"
    | "LIBRETRANSLATE_URL"
    | "LIBRETRANSLATE_API_KEY"
    | "OPENAI_BASE_URL"
    | "OPENAI_API_KEY"
    | "OPENAI_MODEL"
    | "TRANSLATION_TIMEOUT_MS"
  >,
): TranslationEngine | undefined {
  switch (cfg.TRANSLATION_ENGINE) {
    case "apertium":
      return new ApertiumEngine(cfg.APERTIUM_URL!, cfg.TRANSLATION_TIMEOUT_MS);
    case "libretranslate":
      return new LibreTranslateEngine(cfg.LIBRETRANSLATE_URL!, cfg.LIBRETRANSLATE_API_KEY, cfg.TRANSLATION_TIMEOUT_MS);
    case "openai":
      return new OpenAiEngine(cfg.OPENAI_BASE_URL!, cfg.OPENAI_API_KEY, cfg.OPENAI_MODEL, cfg.TRANSLATION_TIMEOUT_MS);
    default:
      return undefined;
  }
}
