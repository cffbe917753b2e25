import { timingSafeEqual, createHash } from "node:crypto";
import type { RequestHandler } from "express";
import { ApsError } from "@aps/platform";

/**
 * The owner's middleware (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/identity-and-abuse.md#suspension-and-revocation, docs/design/operations.md#chart-defaults-against-abuse): app.ts puts it in front
 * of each owner's operation (access `owner`, api/admin/; `MountOptions.owner`) only when
 * APS_ADMIN_TOKEN is set.
 */

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
 * Ingress (docs/design/operations.md#chart-defaults-against-abuse) would let `/V1/ADMIN/…` through.
 */
export const exactAdminPath: RequestHandler = (req, _res, next) => {
  if (/^\/v1\/admin(\/|$)/.test(req.originalUrl)) next();
  else next("router");
};
