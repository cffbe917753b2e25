import { EventEmitter } from "node:events";
import {
  Metadata,
  status as GrpcStatus,
  type handleUnaryCall,
  type ServerUnaryCall,
  type ServiceError,
} from "@grpc/grpc-js";
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import { toServiceError } from "../errors.js";
import type {
  Channel,
  MethodDefinition,
  RequestOf,
  ResponseOf,
  ServiceDefinitionLike,
  UnaryCallback,
  UnaryMethod,
} from "./channel.js";

/**
 * In-process transport of the all-in-one (docs/design/services.md#in-process-transport): a typed client calls the service's gRPC
 * handlers directly — no HTTP/2, no protobuf encoding — with the gRPC contract kept: the same
 * status codes and APS code metadata on errors, deadlines, UNAVAILABLE while the service drains,
 * proto3 defaults on both messages (ts-proto `fromPartial`, which also copies them: caller and
 * handler never share an object), the handler's metrics, and CLIENT/SERVER spans named like the
 * gRPC instrumentation's when tracing is on.
 */
const tracer = trace.getTracer("@aps/platform/local-transport");

/** The handlers of service `D`, keyed like its methods (what `unary(...)` builds). */
export type Implementation<D extends ServiceDefinitionLike> = {
  readonly [K in keyof D["methods"]]: handleUnaryCall<RequestOf<D["methods"][K]>, ResponseOf<D["methods"][K]>>;
};

/** An in-process endpoint of one served service: what a typed client calls instead of a gRPC channel. */
export interface LocalEndpoint<D extends ServiceDefinitionLike> {
  readonly definition: D;
  /** The service's methods in the generated client's callback style. */
  readonly methods: Channel<D>;
  /** What the gRPC health check ("") would answer now: SERVING unless draining or the dependency probe fails (docs/design/operations.md#health-and-readiness). */
  serving(): boolean;
}

/**
 * The lifecycle a gRPC server shares with its in-process endpoints: calls are taken until
 * `close`, which then waits for those in flight (like grpc-js `tryShutdown`).
 */
export class LocalGate {
  private open = true;
  private inFlight = 0;
  private idle: (() => void) | undefined;

  /** @param healthy readiness of the service's dependencies (the probe's last result). */
  constructor(private readonly healthy: () => boolean) {}

  /** True while calls are taken and the dependencies are up. */
  serving(): boolean {
    return this.open && this.healthy();
  }

  /** Admits one call; false once closing (the caller answers UNAVAILABLE). */
  enter(): boolean {
    if (!this.open) return false;
    this.inFlight++;
    return true;
  }

  /** One admitted call's handler has answered. */
  leave(): void {
    if (--this.inFlight === 0) this.idle?.();
  }

  /** Stops taking calls (at once) and resolves when none is in flight, or after `graceMs` (ms). */
  close(graceMs: number): Promise<void> {
    this.open = false;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, graceMs);
      this.idle = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}

/** A grpc-js-like ServiceError (an Error with `code`, `details`, `metadata`), as a client would receive it. */
function serviceError(code: GrpcStatus, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${GrpcStatus[code]}: ${details}`), { code, details, metadata });
}

/** Milliseconds since the epoch of a grpc-js deadline (Date or ms); Infinity when none. */
function deadlineMs(d: Date | number | undefined): number {
  return d === undefined ? Infinity : typeof d === "number" ? d : d.getTime();
}

/**
 * Binds `implementation` (the handlers also served over gRPC) to an in-process endpoint governed
 * by `gate`. Each call: refused with UNAVAILABLE (no APS code: a transport failure, retried by
 * `callRead`) once the gate is closed; request copied through `fromPartial`; handler run with a
 * minimal `ServerUnaryCall` (request, metadata, getPath, getPeer, getDeadline, cancelled +
 * "cancelled" event); answered DEADLINE_EXCEEDED when the caller's deadline passes first; errors
 * as `Error` with the handler's status, details and metadata; response copied through `fromPartial`.
 */
export function localEndpoint<D extends ServiceDefinitionLike>(
  definition: D,
  implementation: Implementation<D>,
  gate: LocalGate,
): LocalEndpoint<D> {
  const methods: Record<string, UnaryMethod<unknown, unknown>> = {};
  for (const [key, def] of Object.entries(definition.methods)) {
    const handler = (implementation as Record<string, handleUnaryCall<unknown, unknown>>)[key];
    if (!handler) throw new Error(`${definition.fullName}: no handler for ${key}`);
    methods[key] = localMethod(definition.fullName, def, handler, gate);
  }
  return { definition, methods: methods as Channel<D>, serving: () => gate.serving() };
}

function localMethod(
  service: string,
  def: MethodDefinition<unknown, unknown>,
  handler: handleUnaryCall<unknown, unknown>,
  gate: LocalGate,
): UnaryMethod<unknown, unknown> {
  const path = `/${service}/${def.name}`;
  const spanName = `grpc.${service}/${def.name}`;
  const attributes = { "rpc.system": "aps_local", "rpc.service": service, "rpc.method": def.name };
  return (req, metadata, options, cb) => {
    const caller = context.active();
    const clientSpan = tracer.startSpan(spanName, { kind: SpanKind.CLIENT, attributes }, caller);
    const traced = clientSpan.isRecording();
    const deadline = deadlineMs(options.deadline);
    const refused =
      deadline <= Date.now()
        ? serviceError(GrpcStatus.DEADLINE_EXCEEDED, "Deadline exceeded")
        : gate.enter()
          ? undefined
          : serviceError(GrpcStatus.UNAVAILABLE, `${service} is shutting down`);
    if (refused) {
      process.nextTick(() => answer(cb, caller, clientSpan, traced, refused, undefined));
      return;
    }
    const noRequestYet: unknown = undefined; // set by run() below
    const call = Object.assign(new EventEmitter(), {
      request: noRequestYet,
      metadata,
      cancelled: false,
      getPath: () => path,
      getPeer: () => "in-process",
      getDeadline: () => options.deadline ?? Infinity,
      getHost: () => "in-process",
      sendMetadata: () => undefined,
    });
    let answered = false;
    let timer: NodeJS.Timeout | undefined;
    const reply = (err: ServiceError | null, res: unknown) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      answer(cb, caller, clientSpan, traced, err, res);
    };
    let serverSpan: Span | undefined;
    let handled = false;
    const done = (err: Partial<ServiceError> | null, res?: unknown) => {
      if (handled) return;
      handled = true;
      gate.leave();
      if (serverSpan) endSpan(serverSpan, err?.code ?? GrpcStatus.OK);
      if (err)
        return reply(
          serviceError(err.code ?? GrpcStatus.UNKNOWN, err.details ?? "", err.metadata ?? new Metadata()),
          undefined,
        );
      let out: unknown;
      try {
        out = def.responseType.fromPartial(res);
      } catch {
        return reply(serviceError(GrpcStatus.INTERNAL, "response could not be built"), undefined);
      }
      reply(null, out);
    };
    if (deadline !== Infinity) {
      const left = deadline - Date.now();
      const expire = () => {
        call.cancelled = true;
        call.emit("cancelled", "deadline");
        reply(serviceError(GrpcStatus.DEADLINE_EXCEEDED, "Deadline exceeded"), undefined);
      };
      timer = setTimeout(expire, Math.max(0, left));
    }
    const run = () => {
      try {
        call.request = def.requestType.fromPartial(req);
        handler(call as unknown as ServerUnaryCall<unknown, unknown>, (err, res) => done(err, res));
      } catch (err) {
        done(toServiceError(err));
      }
    };
    if (!traced) return run();
    const clientCtx = trace.setSpan(caller, clientSpan);
    serverSpan = tracer.startSpan(spanName, { kind: SpanKind.SERVER, attributes }, clientCtx);
    context.with(trace.setSpan(clientCtx, serverSpan), run);
  };
}

/** Delivers one answer to the caller (in the caller's trace context) and ends its CLIENT span. */
function answer(
  cb: UnaryCallback<unknown>,
  caller: Context,
  span: Span,
  traced: boolean,
  err: ServiceError | null,
  res: unknown,
): void {
  if (!traced) return cb(err, res);
  endSpan(span, err?.code ?? GrpcStatus.OK);
  context.with(caller, () => cb(err, res));
}

function endSpan(span: Span, code: GrpcStatus): void {
  span.setAttribute("rpc.grpc.status_code", code);
  if (code !== GrpcStatus.OK) span.setStatus({ code: SpanStatusCode.ERROR, message: GrpcStatus[code] });
  span.end();
}
