import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/**
 * A real OTLP trace receiver for tests, standing in for an OpenTelemetry Collector: the
 * collector's gRPC `opentelemetry.proto.collector.trace.v1.TraceService/Export`, or the OTLP/HTTP
 * `POST /v1/traces` with a protobuf body (`application/x-protobuf`, gzip or not). Both decode the
 * wire bytes with the OTLP message definitions (test/support/otlp/trace_service.proto), so a span
 * counts only when an exporter really sent it in the protocol's encoding.
 */
export type OtlpReceiverProtocol = "grpc" | "http/protobuf";

/** A span as the receiver decoded it. Ids are lowercase hex; `parentSpanId` is "" for a root. */
export interface ReceivedSpan {
  /** `service.name` of the span's resource. */
  service: string;
  /** Instrumentation scope name. */
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP enum name: `SPAN_KIND_SERVER`, `SPAN_KIND_CLIENT`, … */
  kind: string;
  attributes: Record<string, string | number | boolean>;
  /** Resource attributes. */
  resource: Record<string, string | number | boolean>;
}

/** A running receiver. */
export interface OtlpReceiver {
  protocol: OtlpReceiverProtocol;
  /** What OTEL_EXPORTER_OTLP_ENDPOINT gets: `http://127.0.0.1:<port>` (no path, as in the chart). */
  endpoint: string;
  /** Every span received so far. */
  spans: ReceivedSpan[];
  /** HTTP requests received that were not trace exports (`POST /v1/metrics`…); always empty over gRPC. */
  otherRequests: string[];
  stop(): Promise<void>;
}

const PROTO = fileURLToPath(new URL("./otlp/trace_service.proto", import.meta.url));
const SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService";

type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  bytesValue?: Buffer;
};
type KeyValue = { key: string; value?: AnyValue };
type Request = {
  resourceSpans: Array<{
    resource?: { attributes: KeyValue[] };
    scopeSpans: Array<{
      scope?: { name: string };
      spans: Array<{
        traceId: Buffer;
        spanId: Buffer;
        parentSpanId: Buffer;
        name: string;
        kind: string;
        attributes: KeyValue[];
      }>;
    }>;
  }>;
};

function attrs(kvs: KeyValue[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of kvs) {
    if (!value) continue;
    const v =
      value.stringValue ??
      value.boolValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.bytesValue?.toString("hex");
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function flatten(req: Request): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        out.push({
          service: String(resource["service.name"] ?? ""),
          scope: ss.scope?.name ?? "",
          traceId: s.traceId.toString("hex"),
          spanId: s.spanId.toString("hex"),
          parentSpanId: s.parentSpanId.toString("hex"),
          name: s.name,
          kind: s.kind,
          attributes: attrs(s.attributes),
          resource,
        });
      }
    }
  }
  return out;
}

/**
 * Starts a receiver for `protocol` on `host` (default 127.0.0.1; `0.0.0.0` for exporters in
 * containers), on a free port. `endpoint` names 127.0.0.1 either way.
 */
export async function startOtlpReceiver(protocol: OtlpReceiverProtocol, host = "127.0.0.1"): Promise<OtlpReceiver> {
  const def = await protoLoader.load(PROTO, { keepCase: false, longs: String, enums: String, defaults: true });
  const methods = def[SERVICE] as protoLoader.ServiceDefinition;
  const exportMethod = methods.Export!;
  const spans: ReceivedSpan[] = [];
  const otherRequests: string[] = [];

  if (protocol === "grpc") {
    const server = new grpc.Server();
    // Only the TraceService: calls to the metrics and logs services answer UNIMPLEMENTED.
    server.addService(methods, {
      Export: (call: grpc.ServerUnaryCall<Request, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        spans.push(...flatten(call.request));
        cb(null, {});
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:0`, grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    return {
      protocol,
      endpoint: `http://127.0.0.1:${port}`,
      spans,
      otherRequests,
      stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
    };
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        otherRequests.push(`${req.method} ${req.url}`);
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        return;
      }
      if (!String(req.headers["content-type"] ?? "").startsWith("application/x-protobuf")) {
        otherRequests.push(`${req.method} ${req.url} (${String(req.headers["content-type"])})`);
        res.writeHead(415).end();
        return;
      }
      try {
        let body = Buffer.concat(chunks);
        if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
        spans.push(...flatten(exportMethod.requestDeserialize(body) as Request));
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end(exportMethod.responseSerialize({}));
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    protocol,
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    otherRequests,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * The env the chart gives component `c` when `otel.endpoint` is set (charts/aps/templates/_helpers.tpl,
 * components.yaml): endpoint without a path, protocol, OTLP traces and metrics exporters,
 * propagators, `OTEL_SERVICE_NAME=aps-<c>`, resource attributes — plus a 200 ms batch delay (not
 * set by the chart) so a test does not wait out the 5 s default.
 */
export function chartOtelEnv(c: string, endpoint: string, protocol: OtlpReceiverProtocol): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_PROPAGATORS: "tracecontext,baggage",
    OTEL_SERVICE_NAME: `aps-${c}`,
    OTEL_RESOURCE_ATTRIBUTES: "service.namespace=aps,deployment.environment=test",
    OTEL_BSP_SCHEDULE_DELAY: "200",
  };
}

/**
 * The first HTTP server span of `service` whose route (or path, or name) contains `routePart`:
 * how the tracing tests find the root of the request they sent.
 */
export function findHttpServerSpan(
  spans: ReceivedSpan[],
  service: string,
  routePart: string,
): ReceivedSpan | undefined {
  return spans.find(
    (s) =>
      s.service === service &&
      s.kind === "SPAN_KIND_SERVER" &&
      s.scope.endsWith("instrumentation-http") &&
      String(s.attributes["http.route"] ?? s.attributes["url.path"] ?? s.attributes["http.target"] ?? s.name).includes(
        routePart,
      ),
  );
}
