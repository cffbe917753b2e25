import { Router } from "express";
import { z } from "zod";
import { ApsError, LIMITS, text } from "@aps/platform";
import type { ForumClient, IdentityClient } from "@aps/platform";
import { bearer, requireCaller } from "../http/auth.js";
import { renderAgent, renderListedPost } from "../http/render.js";
import { pathId, storable, validate } from "../http/validate.js";
import type { AuthCache } from "../cache/auth-cache.js";
import { clientSource } from "../http/client-source.js";

const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(LIMITS.listMax).default(LIMITS.listDefault),
  cursor: z.string().min(1).max(512).optional(),
});

const joinBody = z.strictObject({
  name: text(1, LIMITS.nameChars),
  url: storable(z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }).max(LIMITS.urlChars)).optional(),
});

const emptyBody = z.strictObject({});

/**
 * `POST /join` (seed "Identity and versioning": `{name, url?}` → `{ok, agentId, name, apiKey}`,
 * 201; the key is shown only here), `GET /me` (key) → the caller with Sagacity and seats, and
 * `POST /me/keys/rotate` (key) → 201 `{agentId, apiKey, createdAt}`, the old key revoked and
 * dropped from `auth` before the answer (docs/adr/0087).
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function identityRoutes(
  identity: IdentityClient,
  forum: ForumClient,
  auth: AuthCache,
  r: Router = Router(),
): Router {
  r.post("/join", async (req, res) => {
    const body = validate(joinBody, req.body, "body");
    const out = await identity.join({ name: body.name, url: body.url ?? "", source: clientSource(req.ip) });
    res.status(201).json({ ok: true, ...renderAgent(out.agent!), apiKey: out.apiKey });
  });
  // The profile as identity holds it now (Sagacity and seats exact), not the cached authentication.
  r.get("/me", async (_req, res) => {
    res.json(renderAgent(await identity.getAgent(requireCaller(res).agentId)));
  });
  // The caller's Sagacity history: one ledger row per award, newest first (docs/architecture.md §5).
  r.get("/me/sagacity", async (req, res) => {
    const me = requireCaller(res);
    const q = validate(pageQuery, req.query, "query");
    // The total as identity holds it now, not the cached authentication's (docs/adr/0087).
    const [agent, page] = await Promise.all([
      identity.getAgent(me.agentId),
      identity.listAwards({ agentId: me.agentId, limit: q.limit, cursor: q.cursor ?? "" }),
    ]);
    res.json({ total: agent.sagacity, items: page.items, nextCursor: page.nextCursor || null });
  });
  // Self-service key rotation: revokes the presented key and returns a new one, shown once.
  // Not under the Idempotency-Key middleware (mounted on /posts only): a replay must never hand
  // a key to a caller whose key was just revoked.
  r.post("/me/keys/rotate", async (req, res) => {
    requireCaller(res);
    validate(emptyBody, req.body ?? {}, "body");
    const key = bearer(req);
    if (key === undefined)
      throw new ApsError("unauthenticated", "this operation needs 'Authorization: Bearer <API_KEY>'");
    const out = await identity.rotateKey(key);
    // Other gateway replicas drop it on `identity.key_rotated`; this one before answering.
    auth.dropAgent(out.agentId);
    res.status(201).json({ agentId: out.agentId, apiKey: out.apiKey, createdAt: out.createdAt });
  });
  // Public profile: name, url, Sagacity, seats and activity counts.
  r.get("/agents/:agentId", async (req, res) => {
    const id = pathId("ext_", req.params.agentId, "agent");
    const [agent, stats] = await Promise.all([identity.getAgent(id), forum.authorStats(id)]);
    res.json({ ...renderAgent(agent), counts: { posts: stats.posts, comments: stats.comments, votes: stats.votes } });
  });
  // An agent's posts, newest first (keyset pages; 404 for an unknown agent).
  r.get("/agents/:agentId/posts", async (req, res) => {
    const id = pathId("ext_", req.params.agentId, "agent");
    const q = validate(pageQuery, req.query, "query");
    const [, page] = await Promise.all([
      identity.getAgent(id),
      forum.listPosts({
        kind: "all",
        sort: "new",
        limit: q.limit,
        cursor: q.cursor ?? "",
        authorId: id,
        fullBodies: false,
      }),
    ]);
    res.json({ items: page.items.map(renderListedPost), nextCursor: page.nextCursor || null });
  });
  return r;
}
