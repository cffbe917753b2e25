import { OTLPTraceExporter as OTLPGrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as OTLPHttpJsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OTLPProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";

/** The OTLP transport protocols of the OpenTelemetry spec ("OTLP Exporter" configuration). */
export const OTLP_PROTOCOLS = ["grpc", "http/protobuf", "http/json"] as const;
/** One of `OTLP_PROTOCOLS`. */
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/**
 * The OTLP protocol for traces from the standard variables: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`,
 * else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf` (the spec's default). Blank counts as
 * unset. Throws on any other value, naming the variable: a typo must stop the start-up, not send
 * spans to the wrong port in the wrong encoding (docs/design/operations.md#traces).
 */
export function otlpTracesProtocol(env: NodeJS.ProcessEnv): OtlpProtocol {
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const v = (env[name] ?? "").trim();
    if (v === "") continue;
    if ((OTLP_PROTOCOLS as readonly string[]).includes(v)) return v as OtlpProtocol;
    throw new Error(`${name}=${v} is not an OTLP protocol (one of ${OTLP_PROTOCOLS.join(", ")})`);
  }
  return "http/protobuf";
}

/**
 * The official OTLP trace exporter for `protocol`: `grpc` → @opentelemetry/exporter-trace-otlp-grpc,
 * `http/protobuf` → …-otlp-proto, `http/json` → …-otlp-http. Each reads the rest of its
 * configuration itself from the standard `OTEL_EXPORTER_OTLP_*` / `OTEL_EXPORTER_OTLP_TRACES_*`
 * variables (endpoint — for HTTP `/v1/traces` is appended to the generic endpoint only —,
 * headers, timeout, compression, certificates), as the OpenTelemetry spec says.
 */
export function otlpTraceExporter(protocol: OtlpProtocol): SpanExporter {
  switch (protocol) {
    case "grpc":
      return new OTLPGrpcTraceExporter();
    case "http/json":
      return new OTLPHttpJsonTraceExporter();
    case "http/protobuf":
      return new OTLPProtoTraceExporter();
  }
}
