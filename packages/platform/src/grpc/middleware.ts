import { AsyncLocalStorage } from "node:async_hooks";
import {
  Channel as GrpcChannel,
  Metadata as GrpcMetadata,
  status as GrpcStatus,
  type ServiceError,
} from "@grpc/grpc-js";
import {
  ClientError,
  composeClientMiddleware,
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Metadata,
} from "nice-grpc-common";
import { deadlineMiddleware } from "nice-grpc-client-middleware-deadline";
import { CODE_METADATA_KEY, fromServiceError } from "../errors.js";
import { AUTHORIZATION_METADATA_KEY, CALLER_METADATA_KEY, type CallerIdentity } from "./caller-auth.js";
import { DRY_RUN_METADATA_KEY, inDryRun } from "../db/dry-run.js";

/**
 * The nice-grpc middleware of every typed client (docs/design/services.md#typed-clients): a
 * deadline covering every attempt, retries declared in the proto, the caller's identity and
 * errors as ApsError. The same chain runs over gRPC and over the in-process transport; the
 * innermost step (transport) differs.
 */

/** Pauses before the retries of a retriable call, ms (a restarting or re-connecting service). */
export const READ_RETRY_DELAYS_MS = [250, 1_000];

/**
 * Call options every typed client method takes besides nice-grpc's own (`metadata`, `signal`):
 * `deadline`, ms from now or an instant, covering every attempt (the client's default is the
 * process's `GRPC_DEADLINE_MS`, docs/design/services.md#deadlines-and-pool-wait).
 */
export interface ApsCallOptions {
  deadline?: number | Date;
}

/** What the deadline step hands to the steps inside it: the call's deadline, ms since the epoch. */
export interface DeadlineAt {
  deadlineAt?: number;
}

/** Idempotency levels (google/protobuf/descriptor.proto, MethodOptions) whose methods may run twice. */
const RETRIABLE_LEVELS = new Set(["NO_SIDE_EFFECTS", "IDEMPOTENT"]);

/**
 * True when the .proto declares `option idempotency_level = NO_SIDE_EFFECTS` (or `IDEMPOTENT`)
 * on `method`: running it again changes nothing, so a call that never reached the service may be
 * sent again (docs/design/services.md#retries-declared-in-the-proto).
 */
export function isRetriable(method: { readonly options?: { readonly idempotencyLevel?: string } }): boolean {
  return RETRIABLE_LEVELS.has(method.options?.idempotencyLevel ?? "");
}

/** True when `req` is a keyed write: a non-empty `idempotencyKey` field (docs/design/edge.md#idempotency-key). */
function hasIdempotencyKey(req: unknown): boolean {
  const key: unknown = (req as { idempotencyKey?: unknown } | null)?.idempotencyKey;
  return typeof key === "string" && key !== "";
}

/** True for a transport failure: UNAVAILABLE without an APS code (the service was not reached). */
function isTransportFailure(err: unknown): boolean {
  const se = err as Partial<ServiceError> | null;
  return se?.code === GrpcStatus.UNAVAILABLE && se.metadata?.get(CODE_METADATA_KEY)[0] === undefined;
}

/** True for the error of a call its caller cancelled (an aborted `signal`). */
function isAbortError(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === "AbortError";
}

/** Waits `ms`, or rejects with an AbortError when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new DOMException("The operation was aborted", "AbortError"));
    const onAbort = () => {
      clearTimeout(t);
      reject(new DOMException("The operation was aborted", "AbortError"));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Retries a call that may run twice — the .proto declares it NO_SIDE_EFFECTS or IDEMPOTENT
 * (isRetriable), or its request carries a non-empty `idempotencyKey` (its service runs it at most
 * once per key and replays the first outcome) — after a transport failure only, at
 * READ_RETRY_DELAYS_MS (250 ms, then 1 s), while the call's deadline (`deadlineAt`) leaves room
 * for the pause. Anything the service itself answered is never retried; nor is any other write
 * (docs/design/services.md#retries-declared-in-the-proto).
 */
export const retryMiddleware: ClientMiddleware<DeadlineAt> = async function* <Req, Res>(
  call: ClientMiddlewareCall<Req, Res>,
  options: CallOptions & Partial<DeadlineAt>,
) {
  if (call.requestStream || call.responseStream || !(isRetriable(call.method) || hasIdempotencyKey(call.request)))
    return yield* call.next(call.request, options);
  const deadline = options.deadlineAt ?? Infinity;
  for (let attempt = 0; ; attempt++) {
    try {
      return yield* call.next(call.request, options);
    } catch (err) {
      const wait = READ_RETRY_DELAYS_MS[attempt];
      if (!isTransportFailure(err) || wait === undefined || Date.now() + wait >= deadline) throw err;
      await pause(wait, options.signal);
    }
  }
};

/**
 * Fixes the call's deadline as an instant: `deadline` (ms from now, or a Date) becomes both the
 * Date nice-grpc's deadline middleware aborts the call at and `deadlineAt` (ms since the epoch)
 * for the steps inside it (retries leave room for it; the in-process transport hands it to the
 * handler as `getDeadline()`).
 */
const deadlineAtMiddleware: ClientMiddleware<ApsCallOptions & DeadlineAt> = async function* <Req, Res>(
  call: ClientMiddlewareCall<Req, Res>,
  options: CallOptions & Partial<ApsCallOptions & DeadlineAt>,
) {
  const { deadline, ...rest } = options;
  if (deadline === undefined) return yield* call.next(call.request, rest);
  const at = typeof deadline === "number" ? Date.now() + deadline : deadline.getTime();
  return yield* call.next(call.request, { ...rest, deadline: new Date(at), deadlineAt: at } as CallOptions);
};

/**
 * Turns any failure into the ApsError `fromServiceError` gives (the service's stable code kept,
 * `aps-retry-after-s` too; a failure without an APS code — not reached, deadline passed — is
 * `upstream_unavailable`), so callers catch ApsError codes; a call its caller cancelled (AbortError)
 * is rethrown as it is.
 */
const apsErrorMiddleware: ClientMiddleware = async function* <Req, Res>(
  call: ClientMiddlewareCall<Req, Res>,
  options: CallOptions,
) {
  try {
    return yield* call.next(call.request, options);
  } catch (err) {
    if (isAbortError(err)) throw err;
    throw fromServiceError(err);
  }
};

/** The deadline of the typed-client call whose gRPC attempt is being started, ms since the epoch (DeadlineChannel). */
const attemptDeadline = new AsyncLocalStorage<number>();

/**
 * A grpc-js channel whose calls carry the deadline of the typed-client call that starts them
 * (nice-grpc starts them without one): the server sees it (`grpc-timeout`, `call.getDeadline()`)
 * and grpc-js ends the call at it, as the in-process transport does. Used by `serviceClient`.
 */
export class DeadlineChannel extends GrpcChannel {
  override createCall(
    ...[method, deadline, ...rest]: Parameters<GrpcChannel["createCall"]>
  ): ReturnType<GrpcChannel["createCall"]> {
    const given = deadline === Infinity ? (attemptDeadline.getStore() ?? Infinity) : deadline;
    return super.createCall(method, given, ...rest);
  }
}

/**
 * The innermost step over gRPC: starts the attempt with the call's deadline (`deadlineAt`, for
 * DeadlineChannel) and, since nice-grpc's ClientError carries no trailers, keeps the call's
 * trailing metadata (where a service puts `aps-code`, `aps-retry-after-s`) and rethrows a failure
 * as a grpc-js ServiceError (code, details, metadata) — the shape the in-process transport gives
 * and `fromServiceError` reads. Unary calls only (the only kind the services declare).
 */
// eslint-disable-next-line require-yield -- a unary step only returns (nice-grpc's contract)
export const grpcTransportMiddleware: ClientMiddleware<DeadlineAt> = async function* <Req, Res>(
  call: ClientMiddlewareCall<Req, Res>,
  options: CallOptions & Partial<DeadlineAt>,
) {
  if (call.requestStream || call.responseStream) throw new Error(`${call.method.path}: only unary calls are supported`);
  let trailer: Metadata | undefined;
  const attempt = call.next(call.request, {
    ...options,
    onTrailer: (t: Metadata) => {
      trailer = t;
      options.onTrailer?.(t);
    },
  });
  try {
    const { deadlineAt } = options;
    const result = await (deadlineAt === undefined
      ? attempt.next()
      : attemptDeadline.run(deadlineAt, () => attempt.next()));
    if (!result.done) throw new Error(`${call.method.path}: a unary call yielded a message`);
    return result.value;
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const metadata = new GrpcMetadata();
    for (const [key, values] of trailer ?? []) for (const v of values) if (typeof v === "string") metadata.add(key, v);
    throw Object.assign(new Error(err.message), { code: err.code, details: err.details, metadata });
  }
};

/**
 * Adds who this process is to every call's metadata: `aps-caller: <name>` and `authorization:
 * Bearer <token>` (docs/design/services.md#caller-policy-and-internal-trust). Over gRPC only: the
 * in-process endpoints are not checked.
 */
export function callerMiddleware(identity: CallerIdentity): ClientMiddleware {
  return async function* <Req, Res>(call: ClientMiddlewareCall<Req, Res>, options: CallOptions) {
    const metadata = Metadata(options.metadata);
    metadata.set(CALLER_METADATA_KEY, identity.name);
    metadata.set(AUTHORIZATION_METADATA_KEY, `Bearer ${identity.token}`);
    return yield* call.next(call.request, { ...options, metadata });
  };
}

/**
 * Marks every call made inside a dry run as one (`aps-dry-run: 1`), so the called service keeps
 * nothing of it either (docs/design/edge.md#dry-run).
 */
export const dryRunMiddleware: ClientMiddleware = async function* <Req, Res>(
  call: ClientMiddlewareCall<Req, Res>,
  options: CallOptions,
) {
  if (!inDryRun()) return yield* call.next(call.request, options);
  const metadata = Metadata(options.metadata);
  metadata.set(DRY_RUN_METADATA_KEY, "1");
  return yield* call.next(call.request, { ...options, metadata });
};

/**
 * The steps every typed client's calls go through, outermost first: errors as ApsError, the
 * deadline fixed as an instant, nice-grpc's deadline middleware (aborts the call when it passes:
 * DEADLINE_EXCEEDED, one deadline for every attempt), retries, the dry-run mark. The transport's
 * own steps (trailers and caller identity over gRPC) go inside.
 */
export const CLIENT_MIDDLEWARE: readonly ClientMiddleware<ApsCallOptions & DeadlineAt>[] = [
  apsErrorMiddleware,
  deadlineAtMiddleware,
  deadlineMiddleware,
  retryMiddleware,
  dryRunMiddleware,
];

/** `steps` (outermost first) as one middleware. */
export function composeMiddleware(
  steps: readonly ClientMiddleware<ApsCallOptions & DeadlineAt>[],
): ClientMiddleware<ApsCallOptions & DeadlineAt> {
  const [outer, ...inner] = steps;
  if (!outer) throw new Error("no middleware to compose");
  return inner.reduce<ClientMiddleware<ApsCallOptions & DeadlineAt>>(
    (acc, step) => composeClientMiddleware(step, acc),
    outer,
  );
}
