import type { IncomingMessage } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import { traceIds, type Logger } from "@aps/platform";

/** Paths never logged: the kubelet's probes and Prometheus's scrapes (every few seconds per pod). */
const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** The matched route's template under its router's base (`/v1/posts/:id`), else `unmatched`. */
function matchedRoute(req: Request): string {
  const path = (req.route as { path?: string | RegExp } | undefined)?.path;
  return path !== undefined ? `${req.baseUrl}${String(path)}` : "unmatched";
}

/** The trace id of a W3C `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`), else undefined. */
function traceparentId(header: string | undefined): string | undefined {
  return /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(header ?? "")?.[1];
}

/**
 * One access-log line per answered request, at info level, message "request" (docs/observability.md
 * "Logs"): `method`, `route` (the template, as `routeOf` names it for the metrics; default the
 * matched route's path, else `unmatched`), `path` (no query string),
 * `status`, `ms` (time to the last byte), `bytes` (the answer's Content-Length, when set),
 * `requestId` (the X-Request-Id answered) and `trace_id`/`span_id` of the request's span — or,
 * when no span is recorded, the trace id of the caller's `traceparent` — so a line leads to its
 * trace and a reported request id to its line. Never headers, the query string or a body (keys and
 * tokens stay out). /healthz, /readyz and /metrics are not logged.
 */
export function accessLog(
  log: Logger,
  routeOf: (req: Request, res: Response) => string = matchedRoute,
): RequestHandler {
  return (req, res, next) => {
    const line = accessLine(log, req, req.path);
    if (line)
      res.once("finish", () =>
        line(routeOf(req, res), res.statusCode, res.getHeader("content-length"), res.getHeader("x-request-id")),
      );
    next();
  };
}

/**
 * Starts the access-log line of `req` (see `accessLog`; `path` without its query string): returns
 * the function that writes it once the answer is finished — `route` as the metrics name it,
 * `length` the answer's Content-Length when set, `requestId` the X-Request-Id answered — or
 * undefined when nothing is to be logged (a quiet path, or info level off: then no work at all).
 */
export function accessLine(
  log: Logger,
  req: IncomingMessage,
  path: string,
): ((route: string, status: number, length: unknown, requestId: unknown) => void) | undefined {
  // below info (LOG_LEVEL=warn: the tests, the benchmark) the line would be dropped: no work at all
  if (QUIET_PATHS.has(path) || !log.isLevelEnabled("info")) return undefined;
  const started = process.hrtime.bigint();
  // the span is the request's own only here: the 'finish' callback runs outside its context
  const ids = traceIds();
  const header = req.headers.traceparent;
  const traceId = ids.trace_id ? undefined : traceparentId(typeof header === "string" ? header : undefined);
  const method = req.method;
  return (route, status, length, requestId) =>
    log.info(
      {
        method,
        route,
        path,
        status,
        ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        ...(length !== undefined ? { bytes: Number(length) } : {}),
        requestId,
        ...ids,
        ...(traceId ? { trace_id: traceId } : {}),
      },
      "request",
    );
}
