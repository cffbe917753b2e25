/** @aps/translation — machine translation of posts and skill.md, cached, within quota (docs/design/search-and-translation.md#machine-translation). */
export { translationService, startTranslation, type TranslationHandle, type TranslationOptions } from "./service.js";
export { loadConfig, translationEnvSchema, translationQuotas, type TranslationConfig } from "./config.js";
export {
  engineFromConfig,
  ApertiumEngine,
  LibreTranslateEngine,
  OpenAiEngine,
  EngineError,
  type TranslationEngine,
} from "./engines/index.js";
export { LANGS, detectLang, isLang, type Lang } from "./langs.js";
export { segment, translateMarkdown, type Segment } from "./markdown.js";
export { Translator, versionOf, type TranslatedPost } from "./translator.js";
