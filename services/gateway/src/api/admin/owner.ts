import { timingSafeEqual, createHash } from "node:crypto";
import type { RequestHandler } from "express";
import { ApsError, type DeadLetterQueue } from "@aps/platform";
import type { identity } from "@aps/proto";
import { renderedAgent } from "../shared.js";

function sha(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** Checks `Authorization: Bearer $APS_ADMIN_TOKEN` in constant time; 401 otherwise. */
export function ownerOnly(token: string): RequestHandler {
  const want = sha(token);
  return (req, _res, next) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.header("authorization") ?? "");
    if (!m || !timingSafeEqual(sha(m[1]!), want)) {
      next(new ApsError("unauthenticated", "admin routes need 'Authorization: Bearer <APS_ADMIN_TOKEN>'"));
      return;
    }
    next();
  };
}

/**
 * Lets only the exact lowercase `/v1/admin` path through; `/V1/Admin/…` leaves the `/v1` router
 * (`next("router")`) and ends at the app's 404. Express matches paths case-insensitively, an
 * Ingress path rule does not: without this, the chart's exclusion of `/v1/admin` from the public
 * Ingress (issue 30 rule 12, docs/adr/0164) would let `/V1/ADMIN/…` through.
 */
export const exactAdminPath: RequestHandler = (req, _res, next) => {
  if (/^\/v1\/admin(\/|$)/.test(req.originalUrl)) next();
  else next("router");
};

/** An agent as the owner's access routes answer it (`AdminAgent`): with its suspension, null when not suspended. */
export function adminAgent(a: identity.Agent) {
  return { ...renderedAgent(a), suspendedAt: a.suspendedAt || null, suspendedReason: a.suspendedReason || null };
}

/** The dead-letter queue, or 503 `upstream_unavailable` (Retry-After 30 s) when the gateway has no event bus. */
export function deadLettersOf(q: DeadLetterQueue | undefined): DeadLetterQueue {
  if (!q)
    throw new ApsError(
      "upstream_unavailable",
      "this gateway has no event bus (NATS_URL unset and no in-process bus)",
      30,
    );
  return q;
}

/** Codes of the owner's routes. */
export const OWNER = ["unauthenticated", "not_found"] as const;
