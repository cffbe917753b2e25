import { inspect } from "node:util";
import type { ErrorRequestHandler, Response } from "express";
import { ApsError, HTTP_STATUS, isDatabaseUnavailable, type Logger } from "@aps/platform";
import { TITLES } from "@aps/api/openapi/problems";

/**
 * Writes an RFC 9457 problem document `{type, title, status, detail, code, requestId}` with
 * `application/problem+json` (docs/design/edge.md#request-path). `type` points at the code's entry in the docs.
 * Adds `WWW-Authenticate: Bearer` on 401 and `Retry-After` (s) when the error carries one.
 */
export function sendProblem(res: Response, err: ApsError): void {
  const status = HTTP_STATUS[err.code];
  if (status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="aps"');
  if (err.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(Math.ceil(err.retryAfterSeconds)));
  res
    .status(status)
    .type("application/problem+json; charset=utf-8")
    .send(
      JSON.stringify({
        type: `/docs/errors.md#${err.code}`,
        title: TITLES[err.code],
        status,
        detail: err.message,
        code: err.code,
        requestId: String(res.getHeader("X-Request-Id") ?? ""),
        ...(err.missingSections ? { missingSections: err.missingSections } : {}),
      }),
    );
}

interface BodyParserError {
  type?: string;
  status?: number;
}

/** Logs a 5xx answer with its cause chain (message, gRPC code and details); 503 at warn, 500 at error. */
function logServerError(log: Logger, e: ApsError, path: string, requestId: unknown): void {
  const status = HTTP_STATUS[e.code];
  if (status < 500) return;
  const cause = e.cause as { message?: unknown; code?: unknown; details?: unknown } | undefined;
  const line = {
    code: e.code,
    status,
    path,
    requestId,
    err: e.message,
    cause:
      cause === undefined
        ? undefined
        : {
            message: typeof cause.message === "string" ? cause.message : inspect(cause, { depth: 2 }),
            grpcCode: cause.code,
            details: cause.details,
          },
  };
  if (status === 503) log.warn(line, "answered 503");
  else log.error(line, "answered 500");
}

/**
 * Final error handler: ApsError → its problem; body-parser failures → 400/413/415; anything
 * else → 500 `internal`, logged with the request id but never sent with a stack trace.
 */
export function problemHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    let e: ApsError;
    if (err instanceof ApsError) e = err;
    else {
      const bp = err as BodyParserError;
      if (bp.type === "entity.too.large") e = new ApsError("payload_too_large", "request body exceeds 64 KiB");
      else if (bp.type === "entity.parse.failed") e = new ApsError("invalid_request", "request body is not valid JSON");
      else if (bp.type === "encoding.unsupported" || bp.type === "charset.unsupported")
        e = new ApsError("unsupported_media_type", "send UTF-8 JSON");
      else if (bp.status && bp.status >= 400 && bp.status < 500)
        e = new ApsError("invalid_request", "malformed request");
      else if (isDatabaseUnavailable(err)) {
        // the gateway's own database (rate limits, Idempotency-Key records, docs/design/edge.md#idempotency-key) is down or
        // frozen: an expected fault, retryable, answered as the services answer theirs (503)
        log.warn(
          {
            err: err instanceof Error ? err.message : String(err),
            requestId: res.getHeader("X-Request-Id"),
            path: req.path,
          },
          "database unavailable",
        );
        e = new ApsError("upstream_unavailable", "the database is unavailable; retry later", 1);
      } else {
        log.error(
          {
            err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err),
            requestId: res.getHeader("X-Request-Id"),
            path: req.path,
          },
          "unhandled error",
        );
        e = new ApsError("internal", "internal error; quote the requestId when reporting it");
      }
    }
    // Every 5xx leaves a log line with its cause (e.g. the gRPC status and details of the failed
    // call); the caller gets only the problem document (docs/design/edge.md#lists-and-cursors).
    if (err instanceof ApsError) logServerError(log, err, req.path, res.getHeader("X-Request-Id"));
    if (res.headersSent) return;
    sendProblem(res, e);
  };
}
