import { EventEmitter } from "node:events";
import {
  Metadata,
  status as GrpcStatus,
  type handleUnaryCall,
  type ServerUnaryCall,
  type ServiceError,
} from "@grpc/grpc-js";
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import type { Client } from "nice-grpc";
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall, Metadata as NiceMetadata } from "nice-grpc-common";
import { toServiceError } from "../errors.js";
import { composeMiddleware, type ApsCallOptions, type DeadlineAt } from "./middleware.js";
import type {
  Channel,
  MethodDefinition,
  RequestOf,
  ResponseOf,
  ServiceDefinition,
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
 * retryMiddleware) once the gate is closed; request copied through `fromPartial`; handler run with a
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

/**
 * A typed client over `endpoint` (docs/design/services.md#in-process-transport): the same
 * nice-grpc `Client` surface as over gRPC, each call going through `steps` (outermost first: the
 * typed clients' CLIENT_MIDDLEWARE) around a direct call of the endpoint's method — request
 * metadata copied, the call's deadline (`deadlineAt`, ms since the epoch) handed to the handler,
 * an aborted `signal` answered with an AbortError at once. `defaults`: call options per method
 * name, or `*` for all (the client's deadline, ms).
 */
export function localClient<D extends ServiceDefinition>(
  endpoint: LocalEndpoint<D>,
  steps: readonly ClientMiddleware<ApsCallOptions & DeadlineAt>[],
  defaults: Readonly<Record<string, ApsCallOptions>>,
): Client<D, ApsCallOptions> {
  const middleware = composeMiddleware(steps);
  const client: Record<string, (req: unknown, options?: CallOptions & ApsCallOptions) => Promise<unknown>> = {};
  for (const [key, def] of Object.entries(endpoint.definition.methods)) {
    const method = (endpoint.methods as Record<string, UnaryMethod<unknown, unknown>>)[key]!;
    const descriptor = {
      path: `/${endpoint.definition.fullName}/${def.name}`,
      requestStream: false,
      responseStream: false,
      options: { ...(def.options?.idempotencyLevel ? { idempotencyLevel: def.options.idempotencyLevel } : {}) },
    } as ClientMiddlewareCall<unknown, unknown>["method"];
    // eslint-disable-next-line require-yield -- a unary step only returns (nice-grpc's contract)
    async function* direct(
      request: unknown,
      options: CallOptions & Partial<DeadlineAt>,
    ): AsyncGenerator<never, unknown> {
      return await callDirect(method, request, options);
    }
    client[key] = async (request, options) => {
      const call = { method: descriptor, requestStream: false, request, responseStream: false, next: direct } as const;
      const run = middleware(call as ClientMiddlewareCall<unknown, unknown>, {
        ...defaults["*"],
        ...defaults[key],
        ...options,
      });
      const result = await run.next();
      if (!result.done || result.value === undefined)
        throw new Error(`${descriptor.path}: a middleware did not return a message`);
      return result.value;
    };
  }
  return client as Client<D, ApsCallOptions>;
}

/** One call of an endpoint's method as a promise: settles with its answer, or an AbortError when `signal` aborts first. */
function callDirect(
  method: UnaryMethod<unknown, unknown>,
  request: unknown,
  options: CallOptions & Partial<DeadlineAt>,
): Promise<unknown> {
  const aborted = () => new DOMException("The operation was aborted", "AbortError");
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal?.addEventListener("abort", onAbort, { once: true });
    method(request, grpcMetadataOf(options.metadata), { deadline: options.deadlineAt ?? Infinity }, (err, res) => {
      signal?.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve(res);
    });
  });
}

/** nice-grpc request metadata as the grpc-js Metadata a handler reads (string values; binary ones as Buffers). */
function grpcMetadataOf(md: NiceMetadata | undefined): Metadata {
  const out = new Metadata();
  for (const [key, values] of md ?? [])
    for (const v of values) out.add(key, typeof v === "string" ? v : Buffer.from(v));
  return out;
}
