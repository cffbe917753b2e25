import express, { type Request, type RequestHandler } from "express";
import { ApsError } from "@aps/platform";

/**
 * How a request body enters /v1 and /mcp (docs/design/edge.md#request-path): JSON only, at most
 * `limit`, read in full — in that order: `requireJsonBody` (415), `express.json` (400 for bad
 * JSON, 413 past the limit), `requireCompleteBody` (400). Mounted once per router by the gateway.
 */
export function jsonBodies(limit = "64kb"): RequestHandler[] {
  return [requireJsonBody, express.json({ limit, strict: true, type: "application/json" }), requireCompleteBody];
}

/**
 * Refuses a request body that is not JSON with 415 `unsupported_media_type` before parsing
 * (docs/design/edge.md#request-path). Bodiless requests pass.
 */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (declaresBody(req) && !req.is("application/json")) {
    next(new ApsError("unsupported_media_type", "send the body as Content-Type: application/json"));
    return;
  }
  next();
};

/**
 * Refuses, after the JSON parser, a request whose declared body did not arrive in full: 400
 * `invalid_request`. body-parser 2 passes a request that already ended (the client cut the upload
 * off, or left, before the parser ran) to the next handler with `req.body` undefined; without this
 * such a request would start executing and bind its Idempotency-Key to a body it never sent
 * (docs/design/edge.md#idempotency-key). Requests without a body, and bodies read in full (`req.complete`), pass.
 */
export const requireCompleteBody: RequestHandler = (req, _res, next) => {
  if (declaresBody(req) && !req.complete) {
    next(new ApsError("invalid_request", "the request body did not arrive in full; send the request again"));
    return;
  }
  next();
};

/** True when the request declares a body: `Transfer-Encoding`, or a `Content-Length` other than 0 (RFC 9112 §6.3). */
function declaresBody(req: Request): boolean {
  return req.header("transfer-encoding") !== undefined || (req.header("content-length") ?? "0") !== "0";
}
