import type { NextFunction, Request, RequestHandler, Response } from "express";
import { httpDuration, httpRequests, metricsText } from "@aps/platform";

/** `res.locals` field naming the route label of a request answered outside the routes (the sandbox proxy's `sandbox`). */
export const ROUTE_LABEL = "routeLabel";

/**
 * RED metrics of the HTTP API: counts and times every request by method, route template (never
 * the raw path: ids stay out of the label set; `unmatched` for a 404 outside any route) and
 * status. The read-cache shortcut, which answers before express, counts its own answers under
 * their route's template (`observeHttpRequest`, docs/design/edge.md#read-cache-shortcut).
 */
export const httpMetrics: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  const started = process.hrtime.bigint();
  res.once("finish", () => observeHttpRequest(req.method, routeOf(req, res), res.statusCode, started));
  next();
};

/**
 * Counts and times one answered request (`aps_http_requests_total`, `aps_http_request_duration_seconds`):
 * `route` is the template, `started` the `process.hrtime.bigint()` (ns) at its arrival.
 */
export function observeHttpRequest(method: string, route: string, status: number, started: bigint): void {
  const labels = { method, route, status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
}

/** The route template that answered `req` (`/v1/posts/:id`; the label set in `res.locals[ROUTE_LABEL]`; else `unmatched`). */
export function routeOf(req: Request, res: Response): string {
  const path = (req.route as { path?: string | RegExp } | undefined)?.path;
  return path !== undefined
    ? `${req.baseUrl}${String(path)}`
    : ((res.locals[ROUTE_LABEL] as string | undefined) ?? "unmatched");
}

/** `GET /metrics`: Prometheus text of this process (in the all-in-one: of every service). */
export const metricsEndpoint: RequestHandler = (_req, res, next) => {
  metricsText().then(({ contentType, body }) => {
    res.setHeader("Content-Type", contentType);
    res.send(body);
  }, next);
};
