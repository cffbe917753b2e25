import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import { ApsError } from "@aps/platform";

/**
 * Sets `Cache-Control: no-store` (seed: responses prevent intermediate caching) and
 * `X-Request-Id` (the caller's, when it is 1–128 safe characters, or a new UUID).
 */
export const standardHeaders: RequestHandler = (req, res, next) => {
  res.setHeader("X-Request-Id", requestIdOf(req.headers["x-request-id"]));
  res.setHeader("Cache-Control", "no-store");
  next();
};

/** The `X-Request-Id` answered: the caller's `given` one when it is 1–128 safe characters, else a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === "string" && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}

/** 404 problem for every unmatched route. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApsError("not_found", `no route for ${req.method} ${req.path}`));
};
