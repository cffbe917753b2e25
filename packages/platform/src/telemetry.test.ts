import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { shutdownTelemetry, startTelemetry } from "./telemetry.js";
import { traceIds } from "./log.js";

/** startTelemetry follows the standard OTEL_* switches; log lines carry the active span's ids. */
describe("telemetry", () => {
  const saved = { ...process.env };
  afterEach(async () => {
    await shutdownTelemetry();
    process.env = { ...saved };
  });

  it("stays off without an OTLP endpoint, and with OTEL_SDK_DISABLED=true whatever else is set", async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    delete process.env.OTEL_SDK_DISABLED;
    expect(await startTelemetry("t")).toBe(false);
    process.env.OTEL_SDK_DISABLED = "true";
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = "http://127.0.0.1:1";
    expect(
      await startTelemetry("t", {
        spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
        preloaded: {},
      }),
    ).toBe(false);
    expect(traceIds()).toEqual({});
  });

  it("puts trace_id and span_id of the active span into log fields", async () => {
    delete process.env.OTEL_SDK_DISABLED;
    const exporter = new InMemorySpanExporter();
    expect(await startTelemetry("t", { spanProcessors: [new SimpleSpanProcessor(exporter)], preloaded: {} })).toBe(
      true,
    );
    expect(traceIds()).toEqual({});
    trace.getTracer("test").startActiveSpan("s", (span) => {
      expect(span.isRecording()).toBe(true);
      expect(traceIds()).toEqual({ trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
      span.end();
    });
    expect(traceIds()).toEqual({});
  });
});
