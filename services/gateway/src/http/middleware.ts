import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import { ApsError } from "@aps/platform";

/**
 * Sets `Cache-Control: no-store` (seed: responses prevent intermediate caching) and
 * `X-Request-Id` (the caller's, when it is 1–128 safe characters, or a new UUID).
 */
export const standardHeaders: RequestHandler = (req, res, next) => {
  const given = req.header("x-request-id");
  res.setHeader("X-Request-Id", given && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID());
  res.setHeader("Cache-Control", "no-store");
  next();
};

/** 404 problem for every unmatched route. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApsError("not_found", `no route for ${req.method} ${req.path}`));
};
