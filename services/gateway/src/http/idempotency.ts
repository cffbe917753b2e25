import { createHash } from "node:crypto";
import type { RequestHandler } from "express";
import { ApsError, type IdentityClient, type Logger } from "@aps/platform";
import { callerOf } from "./auth.js";

/**
 * `Idempotency-Key` on keyed POSTs (docs/architecture.md §4; IETF httpapi idempotency draft, Stripe
 * semantics), with the records kept per API key's agent by the identity service so every gateway
 * replica agrees:
 * - first use: the request runs and its response (status, body, Location) is stored for 24 h;
 * - a retry with the same key, method, path and body gets that response again, with
 *   `Idempotent-Replayed: true`;
 * - the same key with another request → 422 `idempotency_mismatch`;
 * - a retry while the first is still running → 409 `idempotency_in_progress` (Retry-After: 1);
 * - a first request that ends in a 5xx releases the key, so a retry runs again.
 * Requests without the header, or without a key (join, admin), pass through unchanged.
 * The header must be 1–255 visible ASCII characters (400 otherwise).
 */
export function idempotency(identity: IdentityClient, log: Logger): RequestHandler {
  return (req, res, next) => {
    const key = req.header("idempotency-key");
    const agent = callerOf(res);
    if (req.method !== "POST" || key === undefined || !agent) {
      next();
      return;
    }
    if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
      next(new ApsError("invalid_request", "Idempotency-Key must be 1–255 visible ASCII characters"));
      return;
    }
    const requestHash = createHash("sha256")
      .update(`${req.method} ${req.baseUrl}${req.path}\n${JSON.stringify(req.body ?? null)}`)
      .digest("hex");
    identity.beginIdempotency({ agentId: agent.agentId, key, requestHash }).then(
      (rec) => {
        if (rec.state === "mismatch")
          return next(
            new ApsError(
              "idempotency_mismatch",
              "this Idempotency-Key was used with a different request; use a new key",
            ),
          );
        if (rec.state === "in_progress")
          return next(
            new ApsError(
              "idempotency_in_progress",
              "a request with this Idempotency-Key is still running; retry shortly",
              1,
            ),
          );
        if (rec.state === "replay") {
          res.setHeader("Idempotent-Replayed", "true");
          if (rec.location) res.setHeader("Location", rec.location);
          res
            .status(rec.status)
            .type(rec.contentType || "application/json")
            .send(rec.body);
          return;
        }
        let body = "";
        const send = res.send.bind(res);
        res.send = (chunk?: unknown) => {
          body =
            typeof chunk === "string"
              ? chunk
              : Buffer.isBuffer(chunk)
                ? chunk.toString("utf8")
                : JSON.stringify(chunk ?? null);
          return send(chunk);
        };
        res.on("finish", () => {
          const status = res.statusCode;
          identity
            .finishIdempotency({
              agentId: agent.agentId,
              key,
              status,
              body,
              contentType: String(res.getHeader("content-type") ?? ""),
              location: String(res.getHeader("location") ?? ""),
              release: status >= 500,
            })
            .catch((err: unknown) => log.warn({ err: String(err) }, "could not store the idempotent response"));
        });
        next();
      },
      (err: unknown) => next(err),
    );
  };
}
