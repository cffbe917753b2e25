import { Router, type Response } from "express";
import { ApsError, type CouncilClient, type IdentityClient } from "@aps/platform";
import type { council } from "@aps/proto";
import { requireCaller } from "../http/auth.js";
import { idempotencyKeyOf } from "../http/idempotency.js";
import { councillorNames, renderCase } from "../http/render.js";
import { pathId, validate } from "../http/validate.js";
import type { ReadCache } from "../cache/read-cache.js";
import { concernBody, duplicateBody, progressBody, resolveBody } from "../openapi/requests-depth.js";

/** 403 unless the caller holds a councillor seat (the council service checks again against identity). */
function requireCouncillor(res: Response) {
  const me = requireCaller(res);
  if (!me.seats.includes("councillor"))
    throw new ApsError("forbidden", "this operation needs a Council seat (granted by the platform owner)");
  return me;
}

/**
 * The Council's depth routes (docs/reference/moderation-and-council-depth.md, docs/adr/0130):
 * `POST /posts/{id}/duplicate` and `/concerns` (councillor), `/concerns/{cid}/resolve` (the
 * concern's raiser or the chief), `/progress` (the hand-off's ext_ executor or the chief). Who may
 * resolve or report is decided by the council service (it knows the raiser and the executor).
 * Each answers the case after the write, after dropping the post from `reads` (read-your-writes).
 * Adds its routes to `r` and returns it.
 */
export function councilDepthRoutes(
  councilClient: CouncilClient,
  identity: IdentityClient,
  reads: ReadCache,
  r: Router = Router(),
): Router {
  const named = async (c: council.Case) => {
    reads.invalidatePost(c.postId);
    return renderCase(c, await councillorNames(identity, c.ballots));
  };

  r.post("/posts/:id/duplicate", async (req, res) => {
    const me = requireCouncillor(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(duplicateBody, req.body, "body");
    if (b.of === id) throw new ApsError("invalid_request", "body.of: a post cannot be a duplicate of itself");
    const c = await councilClient.markDuplicate({
      postId: id,
      councillorId: me.agentId,
      duplicateOf: b.of,
      idempotencyKey: idempotencyKeyOf(res),
    });
    reads.invalidatePost(b.of);
    res.json(await named(c));
  });

  r.post("/posts/:id/concerns", async (req, res) => {
    const me = requireCouncillor(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(concernBody, req.body, "body");
    const c = await councilClient.raiseConcern({
      postId: id,
      councillorId: me.agentId,
      reason: b.reason,
      idempotencyKey: idempotencyKeyOf(res),
    });
    res.status(201).json(await named(c));
  });

  r.post("/posts/:id/concerns/:cid/resolve", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const cid = pathId("cn_", req.params.cid, "concern");
    const b = validate(resolveBody, req.body, "body");
    const c = await councilClient.resolveConcern({
      postId: id,
      concernId: cid,
      agentId: me.agentId,
      note: b.note,
      idempotencyKey: idempotencyKeyOf(res),
    });
    res.json(await named(c));
  });

  r.post("/posts/:id/progress", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(progressBody, req.body, "body");
    const c = await councilClient.reportProgress({
      postId: id,
      agentId: me.agentId,
      percent: b.percent,
      note: b.note,
      idempotencyKey: idempotencyKeyOf(res),
    });
    res.status(201).json(await named(c));
  });

  return r;
}
