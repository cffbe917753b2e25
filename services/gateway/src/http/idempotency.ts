import { createHash } from "node:crypto";
import type { RequestHandler } from "express";
import { ApsError, type Logger } from "@aps/platform";
import { callerOf, IDEMPOTENCY_KEY_LOCAL } from "@aps/api/http/locals";
import { isDryRun } from "@aps/api/http/dry-run";
import type { IdempotencyStore } from "./idempotency-store.js";

/**
 * True when a response of this status records the key's outcome: the operation ran and answered
 * (2xx, or a 4xx of its own: 403, 404, 409, 422). Otherwise the key is released and a retry runs
 * again: 400 (the request failed validation: it never started executing, Stripe's rule), 429 (it
 * was refused before it ran) and every 5xx (the outcome is unknown here; if the write committed,
 * the owning service replays it, docs/design/edge.md#idempotency-key).
 */
export function recordsOutcome(status: number): boolean {
  return status < 400 || status === 403 || status === 404 || status === 409 || status === 422;
}

/**
 * `Idempotency-Key` on keyed POSTs (docs/design/edge.md#request-path; IETF httpapi idempotency draft, Stripe
 * semantics), in two layers (docs/design/edge.md#idempotency-key):
 * - the HTTP answer is kept per API key's agent in `records`, the gateway's own table in
 *   PostgreSQL (docs/design/edge.md#idempotency-key; in-process only for the one gateway of the embedded all-in-one), so
 *   every gateway replica agrees: a retry with the same key, method, path and body gets it again, with
 *   `Idempotent-Replayed: true`; the same key with another request → 422 `idempotency_mismatch`;
 *   a retry while the first still runs → 409 `idempotency_in_progress` (Retry-After: 1);
 * - the write itself is keyed in the service that owns it (the key travels in the gRPC request),
 *   in the write's own transaction: a retry after a lost answer (client timeout, gateway crash, a
 *   503 after the commit) gets the first result and never writes twice.
 * The answer is stored when the handler has produced it, before it is sent and whether or not the
 * client is still connected; answers that do not record an outcome (recordsOutcome) release the key,
 * also before they are sent (docs/design/edge.md#idempotency-key).
 * Requests without the header, or without a key (join, admin), pass through unchanged.
 * The header must be 1–255 visible ASCII characters (400 otherwise).
 */
export function idempotency(records: IdempotencyStore, log: Logger): RequestHandler {
  return (req, res, next) => {
    const key = req.header("idempotency-key");
    const agent = callerOf(res);
    // a dry run keeps no answer: its key stays free for the real write (docs/design/edge.md#dry-run)
    if (req.method !== "POST" || key === undefined || !agent || isDryRun(res)) {
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
    records.begin(agent.agentId, key, requestHash).then(
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
        res.locals[IDEMPOTENCY_KEY_LOCAL] = key;
        let stored = false;
        const send = res.send.bind(res);
        // express's send() turns an object into JSON and calls send() again with the string: the
        // answer is final when send() gets a string, a Buffer or nothing.
        res.send = (chunk?: unknown) => {
          const final = chunk === undefined || chunk === null || typeof chunk === "string" || Buffer.isBuffer(chunk);
          if (final && !stored) {
            stored = true;
            const status = res.statusCode;
            const body = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : "";
            // stored (or released) before it is sent: a client that retries the moment it has the
            // answer finds the replay, or a free key after a 400, never the claim (docs/design/edge.md#idempotency-key)
            records
              .finish(agent.agentId, key, {
                status,
                body,
                contentType: String(res.getHeader("content-type") ?? "application/json"),
                location: String(res.getHeader("location") ?? ""),
                release: !recordsOutcome(status),
              })
              .catch((err: unknown) => log.warn({ err: String(err) }, "could not store the idempotent response"))
              .then(() => send(chunk))
              .catch((err: unknown) => log.warn({ err: String(err) }, "could not send the idempotent response"));
            return res;
          }
          return send(chunk);
        };
        next();
      },
      (err: unknown) => next(err),
    );
  };
}
