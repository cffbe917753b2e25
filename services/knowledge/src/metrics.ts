import { Counter } from "prom-client";
import { metricsRegistry } from "@aps/platform";

/**
 * Knowledge metrics (docs/design/search-and-translation.md#result-cache), on the process registry
 * (`/metrics`): `aps_knowledge_cache_lookups_total{cache,result}` — lookups of the PostgreSQL
 * engine's caches, `cache` = `search_results` (one per `all` search) or `typo_candidates` (one per
 * query word with a typo budget), `result` = `hit` or `miss`.
 */
export const knowledgeCacheLookups = new Counter({
  name: "aps_knowledge_cache_lookups_total",
  help: "Lookups of the search engine's caches (search_results, typo_candidates) by result (hit or miss).",
  labelNames: ["cache", "result"] as const,
  registers: [metricsRegistry],
});
