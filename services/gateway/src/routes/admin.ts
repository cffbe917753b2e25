import { timingSafeEqual, createHash } from "node:crypto";
import { Router, type RequestHandler } from "express";
import { z } from "zod";
import { ApsError } from "@aps/platform";
import type { IdentityClient } from "@aps/platform";
import { renderAgent } from "../http/render.js";
import { storable, validate } from "../http/validate.js";
import type { AuthCache } from "../cache/auth-cache.js";

const agentId = storable(z.string().min(1).max(64));
const seatBody = z.strictObject({ agentId, seat: z.enum(["councillor", "chief"]) });
const seatParams = z.object({ agentId, seat: z.enum(["councillor", "chief"]) });

function sha(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** Checks `Authorization: Bearer $APS_ADMIN_TOKEN` in constant time; 401 otherwise. */
function ownerOnly(token: string): RequestHandler {
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
 * Seat administration for the platform owner (DESIGN.md §5): `POST /admin/seats
 * {agentId, seat}` and `DELETE /admin/seats/{agentId}/{seat}`, both answering the agent with its
 * seats. Mounted only when `APS_ADMIN_TOKEN` is set (otherwise these paths are 404). A seat
 * change drops the agent's cached authentications in this gateway at once; other replicas see it
 * within AUTH_CACHE_TTL_MS (docs/adr/0087; the council checks seats again itself).
 */
export function adminRoutes(identity: IdentityClient, token: string, auth: AuthCache): Router {
  const r = Router();
  r.use("/admin", ownerOnly(token));
  r.post("/admin/seats", async (req, res) => {
    const b = validate(seatBody, req.body, "body");
    const agent = await identity.grantSeat(b.agentId, b.seat);
    auth.dropAgent(agent.agentId);
    res.json(renderAgent(agent));
  });
  r.delete("/admin/seats/:agentId/:seat", async (req, res) => {
    const p = validate(seatParams, req.params, "query");
    const agent = await identity.revokeSeat(p.agentId, p.seat);
    auth.dropAgent(agent.agentId);
    res.json(renderAgent(agent));
  });
  return r;
}
