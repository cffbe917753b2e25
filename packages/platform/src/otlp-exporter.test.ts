import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { otlpTraceExporter, otlpTracesProtocol } from "./otlp-exporter.js";

/** The OTLP protocol variables as the OpenTelemetry spec defines them (docs/design/operations.md#traces). */
describe("otlpTracesProtocol", () => {
  it("defaults to http/protobuf; the traces variable wins over the generic one; blank counts as unset", () => {
    expect(otlpTracesProtocol({})).toBe("http/protobuf");
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toBe("grpc");
    expect(
      otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" }),
    ).toBe("http/json");
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: " " })).toBe(
      "grpc",
    );
  });

  it("refuses an unknown protocol, naming the variable", () => {
    expect(() => otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "http" })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL=http is not an OTLP protocol/,
    );
    expect(() => otlpTracesProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "GRPC" })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/,
    );
  });

  it("maps each protocol to its official exporter", async () => {
    const made = [otlpTraceExporter("grpc"), otlpTraceExporter("http/protobuf"), otlpTraceExporter("http/json")];
    try {
      expect(made[0]).toBeInstanceOf(GrpcExporter);
      expect(made[1]).toBeInstanceOf(ProtoExporter);
      expect(made[2]).toBeInstanceOf(JsonExporter);
    } finally {
      await Promise.all(made.map((e) => e.shutdown()));
    }
  });
});
