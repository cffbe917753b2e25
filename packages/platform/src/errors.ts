import { Metadata, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";

/**
 * Stable error codes of the public contract (docs/design/edge.md#request-path). The gateway maps each to an HTTP
 * status and an RFC 9457 problem document; services raise them as gRPC status codes.
 */
export type ErrorCode =
  | "invalid_request"
  | "invalid_cursor"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "invalid_state"
  | "precondition_failed"
  | "idempotency_in_progress"
  | "idempotency_mismatch"
  | "payload_too_large"
  | "headers_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "quota_exceeded"
  | "translation_not_cached"
  | "unsupported_language_pair"
  | "verification_failed"
  | "missing_sections"
  | "upstream_unavailable"
  | "internal";

/** HTTP status for each stable code (docs/design/edge.md#request-path). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_cursor: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  precondition_failed: 412,
  idempotency_in_progress: 409,
  idempotency_mismatch: 422,
  payload_too_large: 413,
  headers_too_large: 431,
  unsupported_media_type: 415,
  rate_limited: 429,
  quota_exceeded: 429,
  translation_not_cached: 404,
  unsupported_language_pair: 422,
  verification_failed: 422,
  missing_sections: 422,
  upstream_unavailable: 503,
  internal: 500,
};

const GRPC_FOR: Record<ErrorCode, GrpcStatus> = {
  invalid_request: GrpcStatus.INVALID_ARGUMENT,
  invalid_cursor: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  method_not_allowed: GrpcStatus.UNIMPLEMENTED,
  invalid_state: GrpcStatus.FAILED_PRECONDITION,
  precondition_failed: GrpcStatus.FAILED_PRECONDITION,
  idempotency_in_progress: GrpcStatus.ABORTED,
  idempotency_mismatch: GrpcStatus.INVALID_ARGUMENT,
  payload_too_large: GrpcStatus.INVALID_ARGUMENT,
  headers_too_large: GrpcStatus.INVALID_ARGUMENT,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  quota_exceeded: GrpcStatus.RESOURCE_EXHAUSTED,
  translation_not_cached: GrpcStatus.NOT_FOUND,
  unsupported_language_pair: GrpcStatus.FAILED_PRECONDITION,
  verification_failed: GrpcStatus.FAILED_PRECONDITION,
  missing_sections: GrpcStatus.INVALID_ARGUMENT,
  upstream_unavailable: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
};

/** Metadata keys that carry the stable code and retry hint across a gRPC hop. */
export const CODE_METADATA_KEY = "aps-code";
export const RETRY_AFTER_METADATA_KEY = "aps-retry-after-s";

/**
 * A failure with a stable public code. `retryAfterSeconds` feeds the HTTP `Retry-After` header
 * on 429/503. The message is safe to show to callers (it never carries secrets or stack traces).
 */
export class ApsError extends Error {
  /**
   * @param options.cause what caused it (e.g. the grpc-js ServiceError of a failed call), for the
   *   gateway's log line of a 5xx — never sent to the caller (docs/design/edge.md#lists-and-cursors)
   * @param options.missingSections the template sections a proposal lacks, sent as the problem's
   *   `missingSections` member (RFC 9457 extension; docs/reference/proposing.md "Templates"); the
   *   gateway's own refusals only, not carried across a gRPC hop
   */
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown; missingSections?: readonly string[] },
  ) {
    super(message, options);
    this.name = "ApsError";
    this.missingSections = options?.missingSections;
  }

  /** The problem's `missingSections` extension member, when the refusal names template sections. */
  readonly missingSections: readonly string[] | undefined;
}

/**
 * True for failures of the database connection rather than of the request: connection
 * exceptions (SQLSTATE class 08), too many connections (53300), server shutdown (57P01–57P03),
 * pool checkout timeouts and refused/reset sockets. They are answered `upstream_unavailable`
 * (503, retryable) instead of `internal`.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  const msg = typeof e?.message === "string" ? e.message : "";
  return (
    code.startsWith("08") ||
    code === "53300" ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03" ||
    code === "ECONNREFUSED" ||
    code === "ECONNRESET" ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(msg)
  );
}

/** Converts an ApsError (or anything else, as `internal`) into a grpc-js ServiceError. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const e = asApsError(err);
  const metadata = new Metadata();
  metadata.set(CODE_METADATA_KEY, e.code);
  if (e.retryAfterSeconds !== undefined) metadata.set(RETRY_AFTER_METADATA_KEY, String(e.retryAfterSeconds));
  return { code: GRPC_FOR[e.code], details: e.message, metadata };
}

/**
 * What a handler's failure `err` is answered as: itself when an ApsError; a database outage
 * `upstream_unavailable` (retry after 1 s, see isDatabaseUnavailable); anything else `internal`
 * with a fixed message (the fault's own text stays in the service's log, docs/design/edge.md#lists-and-cursors).
 */
export function asApsError(err: unknown): ApsError {
  if (err instanceof ApsError) return err;
  return isDatabaseUnavailable(err)
    ? new ApsError("upstream_unavailable", "the database is unavailable; retry later", 1)
    : new ApsError("internal", "internal error");
}

/**
 * The ApsError a peer reported as a code and a message (one vote's outcome in a CastVotes answer,
 * docs/design/votes-and-heat.md#gateway-batching): `code` as sent when it is an APS code, else `internal`; `retryAfterSeconds`
 * 0 or absent = none.
 */
export function apsErrorOf(code: string, message: string, retryAfterSeconds?: number, cause?: unknown): ApsError {
  const known = Object.hasOwn(HTTP_STATUS, code);
  return new ApsError(
    known ? (code as ErrorCode) : "internal",
    known ? message || code : "internal error",
    retryAfterSeconds ? retryAfterSeconds : undefined,
    { cause },
  );
}

/**
 * Converts an error thrown by a grpc-js client call back into an ApsError. Connection-level
 * failures (UNAVAILABLE, DEADLINE_EXCEEDED without an APS code) become `upstream_unavailable`.
 */
export function fromServiceError(err: unknown): ApsError {
  if (err instanceof ApsError) return err;
  const se = err as Partial<ServiceError>;
  const md = se.metadata?.get(CODE_METADATA_KEY)[0];
  const retry = se.metadata?.get(RETRY_AFTER_METADATA_KEY)[0];
  if (typeof md === "string" && md in HTTP_STATUS) {
    return new ApsError(md as ErrorCode, se.details ?? md, retry ? Number(retry) : undefined, { cause: err });
  }
  if (
    se.code === GrpcStatus.UNAVAILABLE ||
    se.code === GrpcStatus.DEADLINE_EXCEEDED ||
    se.code === GrpcStatus.CANCELLED
  ) {
    return new ApsError("upstream_unavailable", "a backing service is unavailable; retry later", 1, { cause: err });
  }
  return new ApsError("internal", "internal error", undefined, { cause: err });
}

/**
 * True when a client call failed because the service does not implement the method (gRPC
 * UNIMPLEMENTED, carried as the ApsError's `cause`): a replica of the release before, during a
 * rolling update (docs/design/votes-and-heat.md#gateway-batching).
 */
export function isUnimplemented(err: unknown): boolean {
  const cause = err instanceof ApsError ? err.cause : err;
  return (cause as { code?: unknown } | undefined)?.code === GrpcStatus.UNIMPLEMENTED;
}
