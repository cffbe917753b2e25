/** @aps/knowledge — tag + keyword search over the docs and the forum's posts (docs/design/services.md#services-and-libraries, docs/design/search-and-translation.md#search-engines). */
export {
  knowledgeService,
  startKnowledge,
  engineFromConfig,
  wantsDatabase,
  type KnowledgeHandle,
  type KnowledgeOptions,
} from "./service.js";
export {
  PostgresEngine,
  PG_INDEX_FORMAT,
  SEARCH_BOUNDS,
  type PgIndexState,
  type SearchBounds,
} from "./store/postgres-engine.js";
export { loadConfig, knowledgeEnvSchema, type KnowledgeConfig } from "./config.js";
export {
  EmbeddedEngine,
  type SearchEngine,
  type KnowledgeDoc,
  type SearchHit,
  type SearchResult,
  type SearchOptions,
} from "./engine.js";
export { MeiliEngine, type MeiliOptions } from "./meili.js";
