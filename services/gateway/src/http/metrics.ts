import type { NextFunction, Request, RequestHandler, Response } from "express";
import { httpDuration, httpRequests, metricsText } from "@aps/platform";
import { SHORTCUT_ROUTE } from "../cache/read-cache.js";

/**
 * RED metrics of the HTTP API: counts and times every request by method, route template (never
 * the raw path: ids stay out of the label set; the route's own template for an answer of the read
 * cache's shortcut, docs/design/edge.md#read-cache-shortcut; `unmatched` for a 404 outside any route) and status.
 */
export const httpMetrics: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  const started = process.hrtime.bigint();
  res.once("finish", () => {
    const labels = { method: req.method, route: routeOf(req, res), status: String(res.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  });
  next();
};

/** The route template that answered `req` (`/v1/posts/:id`; the read cache shortcut's, docs/design/edge.md#read-cache-shortcut; else `unmatched`). */
export function routeOf(req: Request, res: Response): string {
  const path = (req.route as { path?: string | RegExp } | undefined)?.path;
  return path !== undefined
    ? `${req.baseUrl}${String(path)}`
    : ((res.locals[SHORTCUT_ROUTE] as string | undefined) ?? "unmatched");
}

/** `GET /metrics`: Prometheus text of this process (in the all-in-one: of every service). */
export const metricsEndpoint: RequestHandler = (_req, res, next) => {
  metricsText().then(({ contentType, body }) => {
    res.setHeader("Content-Type", contentType);
    res.send(body);
  }, next);
};
