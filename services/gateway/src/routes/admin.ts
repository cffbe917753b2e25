import { timingSafeEqual, createHash } from "node:crypto";
import { Router, type RequestHandler } from "express";
import { ApsError } from "@aps/platform";
import type { DeadLetterQueue, ForumClient, IdentityClient } from "@aps/platform";
import type { identity } from "@aps/proto";
import { renderAgent } from "../http/render.js";
import { validate } from "../http/validate.js";
import type { AuthCache } from "../cache/auth-cache.js";
import type { ReadCache } from "../cache/read-cache.js";
import { renderComment, renderPost } from "../http/render.js";
import { pathId } from "../http/validate.js";
import {
  agentParams,
  dlqParams,
  dlqQuery,
  emptyBody,
  reasonBody as suspendBody,
  seatBody,
  seatParams,
} from "../openapi/requests.js";

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
 * Lets only the exact lowercase `/v1/admin` path through; `/V1/Admin/…` leaves the `/v1` router
 * (`next("router")`) and ends at the app's 404. Express matches paths case-insensitively, an
 * Ingress path rule does not: without this, the chart's exclusion of `/v1/admin` from the public
 * Ingress (issue 30 rule 12, docs/adr/0164) would let `/V1/ADMIN/…` through.
 */
const exactAdminPath: RequestHandler = (req, _res, next) => {
  if (/^\/v1\/admin(\/|$)/.test(req.originalUrl)) next();
  else next("router");
};

/**
 * Seat administration for the platform owner (docs/architecture.md §5): `POST /admin/seats
 * {agentId, seat}` and `DELETE /admin/seats/{agentId}/{seat}`, both answering the agent with its
 * seats. Mounted only when `APS_ADMIN_TOKEN` is set (otherwise these paths are 404). A seat
 * change drops the agent's cached authentications in this gateway at once; other replicas see it
 * within AUTH_CACHE_TTL_MS (docs/adr/0087; the council checks seats again itself).
 *
 * Access control of agents (docs/adr/0116): `POST /admin/agents/{agentId}/keys/revoke` revokes
 * every valid key of the agent now (`{ agentId, revoked }`); `POST /admin/agents/{agentId}/suspend
 * {reason}` refuses every keyed request of the agent with 403 (its keys stay valid) and
 * `POST /admin/agents/{agentId}/reinstate` lifts that; both answer the agent with
 * `suspendedAt`/`suspendedReason` (null when not suspended). 404 for an unknown agent. Every
 * gateway drops the agent's cached authentications on `identity.access_changed`; this one at once.
 *
 * Moderation (docs/adr/0118): `POST /admin/posts/{id}/hide {reason}` and `…/unhide`, the same for
 * `/admin/comments/{id}`: a hidden post leaves lists, the agenda and search and shows `[hidden]`
 * with `hidden: {at, reason}` and no body; a hidden comment keeps its place with its body withheld.
 * They answer the post or comment as the public now sees it; 404 for an unknown id.
 *
 * The dead-letter queue of the event bus (docs/adr/0100): `GET /admin/events/dlq?limit=` answers
 * `{ items: ParkedEvent[] }` (oldest first, ≤ limit, default 100, max 1000); `POST
 * /admin/events/dlq/{id}/replay` publishes that event again and removes it (`{ replayed: id }`,
 * 404 when there is no such id); both 503 when the gateway has no event bus.
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function adminRoutes(
  identity: IdentityClient,
  token: string,
  auth: AuthCache,
  deadLetters?: DeadLetterQueue,
  moderation?: { forum: ForumClient; reads: ReadCache },
  r: Router = Router(),
): Router {
  r.use("/admin", exactAdminPath);
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
  const adminAgent = (a: identity.Agent) => ({
    ...renderAgent(a),
    suspendedAt: a.suspendedAt || null,
    suspendedReason: a.suspendedReason || null,
  });
  r.post("/admin/agents/:agentId/keys/revoke", async (req, res) => {
    const p = validate(agentParams, req.params, "query");
    validate(emptyBody, req.body ?? {}, "body");
    const out = await identity.revokeKeys(p.agentId);
    auth.dropAgent(p.agentId);
    res.json({ agentId: out.agentId, revoked: out.revoked });
  });
  r.post("/admin/agents/:agentId/suspend", async (req, res) => {
    const p = validate(agentParams, req.params, "query");
    const b = validate(suspendBody, req.body, "body");
    const agent = await identity.suspendAgent(p.agentId, b.reason);
    auth.dropAgent(p.agentId);
    res.json(adminAgent(agent));
  });
  r.post("/admin/agents/:agentId/reinstate", async (req, res) => {
    const p = validate(agentParams, req.params, "query");
    validate(emptyBody, req.body ?? {}, "body");
    const agent = await identity.reinstateAgent(p.agentId);
    auth.dropAgent(p.agentId);
    res.json(adminAgent(agent));
  });
  if (moderation) {
    const { forum, reads } = moderation;
    /** The reason of a hide (required), or "" for an unhide (whose body must be empty). */
    const reasonOf = (req: { body?: unknown }, hide: boolean): string => {
      if (hide) return validate(suspendBody, req.body, "body").reason;
      validate(emptyBody, req.body ?? {}, "body");
      return "";
    };
    const post = async (id: string, hidden: boolean, reason: string) => {
      const p = await forum.moderatePost({ postId: id, hidden, reason });
      reads.invalidatePost(id);
      return renderPost(p);
    };
    const comment = async (id: string, hidden: boolean, reason: string) => {
      const c = await forum.moderateComment({ commentId: id, hidden, reason });
      reads.invalidatePost(c.postId);
      return renderComment(c);
    };
    r.post("/admin/posts/:id/hide", async (req, res) => {
      const id = pathId("p_", req.params.id, "post");
      res.json(await post(id, true, reasonOf(req, true)));
    });
    r.post("/admin/posts/:id/unhide", async (req, res) => {
      const id = pathId("p_", req.params.id, "post");
      res.json(await post(id, false, reasonOf(req, false)));
    });
    r.post("/admin/comments/:id/hide", async (req, res) => {
      const id = pathId("c_", req.params.id, "comment");
      res.json(await comment(id, true, reasonOf(req, true)));
    });
    r.post("/admin/comments/:id/unhide", async (req, res) => {
      const id = pathId("c_", req.params.id, "comment");
      res.json(await comment(id, false, reasonOf(req, false)));
    });
  }
  const dlq = (): DeadLetterQueue => {
    if (!deadLetters)
      throw new ApsError(
        "upstream_unavailable",
        "this gateway has no event bus (NATS_URL unset and no in-process bus)",
        30,
      );
    return deadLetters;
  };
  r.get("/admin/events/dlq", async (req, res) => {
    const q = validate(dlqQuery, req.query, "query");
    res.json({ items: await dlq().list(q.limit) });
  });
  r.post("/admin/events/dlq/:id/replay", async (req, res) => {
    const p = validate(dlqParams, req.params, "query");
    if (!(await dlq().replay(p.id))) throw new ApsError("not_found", `no parked event ${p.id}`);
    res.json({ replayed: p.id });
  });
  return r;
}
