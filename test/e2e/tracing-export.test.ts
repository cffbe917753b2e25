import { join } from "node:path";
import {
  createTestDatabase,
  deleteTestStream,
  eventually,
  hasNats,
  hasPostgres,
  httpClient,
  startNode,
  TEST_NATS_URL,
  uniqueBusNames,
  type TestDatabase,
  type TestProcess,
} from "@aps/testkit";
import { ROOT } from "../support/system.js";
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type OtlpReceiverProtocol,
  chartOtelEnv,
  findHttpServerSpan,
  type ReceivedSpan,
} from "../support/otlp-receiver.js";

/**
 * Traces reach a collector from the production start-up path (docs/design/operations.md#traces): the
 * identity service and the gateway run as their own processes, started as the chart starts them
 * (`node services/<component>/dist/main.js`, the image's entry point) with the OTEL_* variables
 * the chart sets from `otel.endpoint` / `otel.protocol` (charts/aps/templates/_helpers.tpl,
 * components.yaml: endpoint without a path, protocol, OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER
 * = otlp, propagators, OTEL_SERVICE_NAME=aps-<component>, resource attributes). A real OTLP
 * receiver runs in the test — a gRPC TraceService, or an HTTP `/v1/traces` endpoint decoding the
 * protobuf body — and `POST /v1/join` must arrive there as one trace: the gateway's HTTP server
 * span and gRPC client span, the identity service's gRPC server span (child of that client span,
 * across processes) and its PostgreSQL query spans.
 */
const real = (await hasPostgres()) && (await hasNats());
const describeReal = real ? describe : describe.skip;
const title = real
  ? "traces reach a real OTLP receiver from the real start-up path"
  : "SKIPPED (no PostgreSQL/NATS here): traces reach a real OTLP receiver";

describeReal(title, () => {
  describe.each<OtlpReceiverProtocol>(["grpc", "http/protobuf"])("OTEL_EXPORTER_OTLP_PROTOCOL=%s", (protocol) => {
    let receiver: OtlpReceiver;
    let db: TestDatabase;
    const names = uniqueBusNames();
    const procs: TestProcess[] = [];

    beforeAll(async () => {
      receiver = await startOtlpReceiver(protocol);
      db = await createTestDatabase();
    });
    afterAll(async () => {
      for (const p of procs.reverse()) await p.stop();
      await receiver?.stop();
      await deleteTestStream(names.stream);
      await db?.drop();
    });

    it("POST /v1/join arrives as one trace: gateway HTTP server → gRPC client → identity gRPC server → PostgreSQL", async () => {
      const common = {
        DATABASE_URL: db.url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: names.stream,
        APS_SUBJECT_PREFIX: names.prefix,
        LOG_LEVEL: "info",
      };
      const identity = await startNode(
        [join(ROOT, "services/identity/dist/main.js")],
        { ...common, IDENTITY_LISTEN_ADDR: "127.0.0.1:0", ...chartOtelEnv("identity", receiver.endpoint, protocol) },
        /"port":(\d+)[^\n]*"msg":"gRPC server listening"/,
      );
      procs.push(identity);
      const gateway = await startNode(
        [join(ROOT, "services/gateway/dist/main.js")],
        {
          LOG_LEVEL: "warn",
          PORT: "0",
          HOST: "127.0.0.1",
          IDENTITY_GRPC_ADDR: `127.0.0.1:${identity.ready}`,
          ...chartOtelEnv("gateway", receiver.endpoint, protocol),
        },
        /APS gateway ready at (\S+)/,
      );
      procs.push(gateway);

      const joined = await httpClient(gateway.ready)("POST", "/join", { body: { name: `otlp ${protocol}` } });
      expect(joined.status).toBe(201);

      const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
      let server: ReceivedSpan | undefined;
      let spans: ReceivedSpan[] = [];
      // Generous ceiling: two processes export on their own batch timers on a loaded machine.
      await eventually(
        async () => {
          server = findHttpServerSpan(receiver.spans, "aps-gateway", "join");
          expect(server).toBeDefined();
          spans = inTrace(server!.traceId);
          expect(spans.some((s) => s.service === "aps-identity" && s.kind === "SPAN_KIND_SERVER")).toBe(true);
          expect(spans.some((s) => s.service === "aps-identity" && s.scope.endsWith("instrumentation-pg"))).toBe(true);
        },
        60_000,
        200,
      );

      const gwClient = spans.find(
        (s) => s.service === "aps-gateway" && s.kind === "SPAN_KIND_CLIENT" && s.name.startsWith("grpc.aps.identity"),
      );
      expect(gwClient).toBeDefined();
      const idServer = spans.find(
        (s) => s.service === "aps-identity" && s.kind === "SPAN_KIND_SERVER" && s.parentSpanId === gwClient!.spanId,
      );
      expect(idServer).toBeDefined();
      expect(idServer!.name).toBe(gwClient!.name);
      // Resource attributes from OTEL_RESOURCE_ATTRIBUTES arrive with the spans.
      expect(server!.resource["service.namespace"]).toBe("aps");
      expect(idServer!.resource["deployment.environment"]).toBe("test");
      // The pg spans are the identity server span's descendants (same process, same trace).
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const underServer = (s: ReceivedSpan): boolean =>
        s.parentSpanId === idServer!.spanId || (byId.has(s.parentSpanId) && underServer(byId.get(s.parentSpanId)!));
      expect(spans.filter((s) => s.scope.endsWith("instrumentation-pg")).every(underServer)).toBe(true);
      // No API key anywhere in what left the processes.
      const apiKey = String(joined.body.apiKey);
      expect(JSON.stringify(receiver.spans)).not.toContain(apiKey);
    }, 180_000);
  });
});

describe("otlp receiver (the test's own oracle)", () => {
  it("an endpoint nothing exports to receives nothing (so a pass above means spans arrived)", async () => {
    const r = await startOtlpReceiver("http/protobuf");
    try {
      const res = await fetch(`${r.endpoint}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(415);
      expect(r.spans).toEqual([]);
    } finally {
      await r.stop();
    }
  });
});
