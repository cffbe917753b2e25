import { register } from "node:module";
import { createAddHookMessageChannel } from "import-in-the-middle";
import { NodeSDK } from "@opentelemetry/sdk-node";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Instrumentation } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { ExpressInstrumentation } from "@opentelemetry/instrumentation-express";
import { GrpcInstrumentation } from "@opentelemetry/instrumentation-grpc";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { otlpTraceExporter, otlpTracesProtocol } from "./otlp-exporter.js";
import { setTelemetryShutdown, shutdownTelemetry } from "./telemetry-hooks.js";

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

/** Paths never traced (probes and scrapes). */
const UNTRACED_PATHS = new Set(["/metrics", "/healthz", "/readyz"]);

/**
 * The instrumentations of every APS service: HTTP (server spans of the gateway; no headers and no
 * bodies are ever recorded — in particular never `Authorization`), express (route spans), gRPC
 * (client and server spans, W3C trace context in metadata) and pg (query spans; statement text
 * only, never parameters, and only inside a trace so the relay's idle polling makes no spans).
 */
export function apsInstrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? "").split("?")[0] ?? ""),
      // Outgoing HTTP of the services is telemetry export itself or nothing: keep it out.
      ignoreOutgoingRequestHook: () => true,
      headersToSpanAttributes: { client: { requestHeaders: [], responseHeaders: [] }, server: { requestHeaders: [], responseHeaders: [] } },
    }),
    new ExpressInstrumentation(),
    new GrpcInstrumentation({ ignoreGrpcMethods: [/^Check$/, /^Watch$/] }),
    new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
  ];
}

let started = false;

/**
 * Starts OpenTelemetry tracing for `serviceName`, configured only by the standard `OTEL_*` env
 * vars: off when `OTEL_SDK_DISABLED=true` or when no `OTEL_EXPORTER_OTLP_ENDPOINT` /
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (nothing is loaded, spans are no-ops); otherwise the
 * official OTLP exporter of `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`grpc`, `http/protobuf` — the default —, `http/json`; anything else throws) behind a batch
 * processor (`OTEL_BSP_*`), docs/adr/0093. `OTEL_SERVICE_NAME` wins over `serviceName`.
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
  const exporter = opts.spanProcessors ? undefined : otlpTraceExporter(otlpTracesProtocol(env));
  started = true;

  let waitForHooks: (() => Promise<void>) | undefined;
  if (!opts.preloaded) {
    // ESM: imports of CJS packages bypass require hooks, so register import-in-the-middle's
    // loader, limited to the modules instrumented here.
    const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
    register("import-in-the-middle/hook.mjs", import.meta.url, registerOptions as never);
    waitForHooks = waitForAllMessagesAcknowledged;
  }
  const instrumentations = apsInstrumentations();
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName }),
    // A trace exporter alone: the SDK puts it behind a batch processor configured by OTEL_BSP_*.
    ...(opts.spanProcessors ? { spanProcessors: opts.spanProcessors } : { traceExporter: exporter }),
    instrumentations,
  });
  sdk.start();
  const unpatch = opts.preloaded ? patchPreloaded(instrumentations, opts.preloaded) : () => undefined;
  await waitForHooks?.();
  setTelemetryShutdown(async () => {
    unpatch();
    for (const i of instrumentations) i.disable();
    await sdk.shutdown();
    started = false;
  });
  return true;
}

/** Applies the instrumentations' patches to already-loaded modules; returns the undo. */
function patchPreloaded(instrumentations: Instrumentation[], preloaded: Record<string, PreloadedModule>): () => void {
  const undo: Array<() => void> = [];
  for (const inst of instrumentations) {
    const defs = (inst as unknown as { getModuleDefinitions(): Array<{ name: string; patch?: (e: unknown, v?: string) => unknown; unpatch?: (e: unknown, v?: string) => void }> }).getModuleDefinitions();
    for (const def of defs) {
      const mod = preloaded[def.name];
      if (!mod || !def.patch) continue;
      def.patch(mod.exports, mod.version);
      undo.push(() => def.unpatch?.(mod.exports, mod.version));
    }
  }
  return () => undo.reverse().forEach((u) => u());
}
