import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { shutdownTelemetry } from "./telemetry-hooks.js";

export { shutdownTelemetry };

/**
 * A module already loaded by a loader the instrumentation hooks cannot see (jest's module
 * registry): its exports and version, patched in place by `startTelemetry`.
 */
export interface PreloadedModule {
  exports: unknown;
  version: string;
}

/** Test seams of `startTelemetry`. */
export interface TelemetryOptions {
  /** Span processors to use instead of the OTLP exporter (tests: an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
  /**
   * Modules to patch directly, by package name (`pg`, `@grpc/grpc-js`, `express`, `http`),
   * instead of registering the Node loader hooks. Used under jest, whose module registry the
   * hooks do not see.
   */
  preloaded?: Record<string, PreloadedModule>;
}

let started = false;

/**
 * Starts OpenTelemetry tracing for `serviceName`, configured only by the standard `OTEL_*` env
 * vars: off when `OTEL_SDK_DISABLED=true` or when no `OTEL_EXPORTER_OTLP_ENDPOINT` /
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (nothing is loaded, spans are no-ops); otherwise the
 * official OTLP exporter of `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`grpc`, `http/protobuf` — the default —, `http/json`; anything else throws) behind a batch
 * processor (`OTEL_BSP_*`), docs/design/operations.md#traces. `OTEL_SERVICE_NAME` wins over `serviceName`.
 *
 * Must run before pg, @grpc/grpc-js, express and http are imported: each entry point calls it
 * first and then imports the service with a dynamic `import()`. Returns true when tracing is on.
 */
export async function startTelemetry(serviceName: string, opts: TelemetryOptions = {}): Promise<boolean> {
  if (started) return true;
  const env = process.env;
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true") return false;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!opts.spanProcessors && !endpoint) return false;
  // Before anything is hooked: a bad protocol fails the start-up with nothing half-started.
  // The SDK is loaded only now: with tracing off, none of it is in memory.
  const sdk = await import("./telemetry-sdk.js");
  const exporter = opts.spanProcessors ? undefined : sdk.exporterFromEnv(env);
  started = true;
  await sdk.startSdk(serviceName, opts, env, exporter, () => (started = false));
  return true;
}
