import { Counter } from "prom-client";
import { metricsRegistry } from "@aps/platform";

/**
 * Translation metrics (docs/design/operations.md#at-a-glance), on the process registry (`/metrics`):
 * - `aps_translation_cache_total{result}`: lookups answered from the cache (`hit`) or not (`miss`);
 * - `aps_translation_engine_calls_total{engine,outcome}`: translation jobs handed to an engine
 *   (one per generated post, title or document; `ok`, `unsupported_pair`, `unavailable`); with no
 *   engine configured, engine `none` and outcome `unavailable` for each job refused.
 */
export const cacheLookups = new Counter({
  name: "aps_translation_cache_total",
  help: "Translation cache lookups by result (hit or miss).",
  labelNames: ["result"] as const,
  registers: [metricsRegistry],
});
export const engineCalls = new Counter({
  name: "aps_translation_engine_calls_total",
  help: "Translation jobs sent to an engine, by engine and outcome.",
  labelNames: ["engine", "outcome"] as const,
  registers: [metricsRegistry],
});
