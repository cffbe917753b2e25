// The OpenTelemetry SDK, its instrumentations and OTLP exporters: loaded by `startTelemetry` only
// when tracing is on, so a process without an OTLP endpoint does not carry them (~55 MiB of RSS).
import { register } from "node:module";
import { createAddHookMessageChannel } from "import-in-the-middle";
import { NodeSDK } from "@opentelemetry/sdk-node";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Instrumentation } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { ExpressInstrumentation } from "@opentelemetry/instrumentation-express";
import { GrpcInstrumentation } from "@opentelemetry/instrumentation-grpc";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { otlpTraceExporter, otlpTracesProtocol } from "./otlp-exporter.js";
import { context } from "@opentelemetry/api";
import { getRPCMetadata, RPCType } from "@opentelemetry/core";
import { setHttpRouteNamer, setTelemetryShutdown } from "./telemetry-hooks.js";
import type { PreloadedModule, TelemetryOptions } from "./telemetry.js";

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
      headersToSpanAttributes: {
        client: { requestHeaders: [], responseHeaders: [] },
        server: { requestHeaders: [], responseHeaders: [] },
      },
    }),
    new ExpressInstrumentation(),
    new GrpcInstrumentation({ ignoreGrpcMethods: [/^Check$/, /^Watch$/] }),
    new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
  ];
}

/**
 * The OTLP exporter `env` asks for (see `startTelemetry`); throws on an unknown protocol, before
 * anything is hooked.
 */
export function exporterFromEnv(env: NodeJS.ProcessEnv): SpanExporter {
  return otlpTraceExporter(otlpTracesProtocol(env));
}

/**
 * Starts the SDK for `serviceName` (the body of `startTelemetry` once it decided tracing is on):
 * loader hooks (or `opts.preloaded` patched in place), the instrumentations, the exporter or
 * `opts.spanProcessors`, and the shutdown hook, which calls `onShutdown` at its end.
 */
export async function startSdk(
  serviceName: string,
  opts: TelemetryOptions,
  env: NodeJS.ProcessEnv,
  exporter: SpanExporter | undefined,
  onShutdown: () => void,
): Promise<void> {
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
  setHttpRouteNamer((route) => {
    const meta = getRPCMetadata(context.active());
    if (meta?.type === RPCType.HTTP) meta.route = route;
  });
  setTelemetryShutdown(async () => {
    setHttpRouteNamer(undefined);
    unpatch();
    for (const i of instrumentations) i.disable();
    await sdk.shutdown();
    onShutdown();
  });
}

/** Applies the instrumentations' patches to already-loaded modules; returns the undo. */
function patchPreloaded(instrumentations: Instrumentation[], preloaded: Record<string, PreloadedModule>): () => void {
  const undo: Array<() => void> = [];
  for (const inst of instrumentations) {
    const defs = (
      inst as unknown as {
        getModuleDefinitions(): Array<{
          name: string;
          patch?: (e: unknown, v?: string) => unknown;
          unpatch?: (e: unknown, v?: string) => void;
        }>;
      }
    ).getModuleDefinitions();
    for (const def of defs) {
      const mod = preloaded[def.name];
      if (!mod || !def.patch) continue;
      def.patch(mod.exports, mod.version);
      undo.push(() => def.unpatch?.(mod.exports, mod.version));
    }
  }
  return () => undo.reverse().forEach((u) => u());
}
