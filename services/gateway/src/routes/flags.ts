import { Router, type RequestHandler } from "express";
import type { ForumClient, IdentityClient } from "@aps/platform";
import type { forum } from "@aps/proto";
import { requireCaller } from "../http/auth.js";
import { abuseSource } from "../http/client-source.js";
import { pathId, validate } from "../http/validate.js";
import type { ReadCache } from "../cache/read-cache.js";
import { flagBody } from "../openapi/requests-depth.js";

/** Public JSON of a flag as its flagger sees it (docs/adr/0131). */
export function renderFlag(f: forum.FlagResult) {
  return {
    targetId: f.targetId,
    postId: f.postId,
    reason: f.reason,
    text: f.text || null,
    flaggedAt: f.flaggedAt,
    counted: f.counted,
    hidden: f.hidden,
  };
}

/**
 * Flag routes (docs/reference/moderation-and-council-depth.md, docs/adr/0131):
 * `POST /posts/{id}/flags` and `POST /comments/{id}/flags` with `{reason, text?}`, any agent once
 * per target. The caller's Sagacity, read fresh from identity (the authentication cache may be
 * seconds old, ADR 0087), decides the flag's weight in the forum; the caller's source
 * (`abuseSource`, docs/adr/0153) makes it count at most once per source, and the forum keeps the
 * daily budget FLAGS_PER_DAY (429 `quota_exceeded` beyond; issue 30 rule 4, docs/adr/0155).
 * Answers 201 with the flag; drops the post's cached reads (a flag may hide it).
 */
export function flagRoutes(
  forumClient: ForumClient,
  identity: IdentityClient,
  reads: ReadCache,
  r: Router = Router(),
): Router {
  const handler =
    (prefix: "p_" | "c_", what: string): RequestHandler =>
    async (req, res) => {
      const me = requireCaller(res);
      const id = pathId(prefix, req.params.id, what);
      const b = validate(flagBody, req.body, "body");
      const f = await forumClient.flag({
        targetId: id,
        flaggerId: me.agentId,
        flaggerSagacity: (await identity.getAgent(me.agentId)).sagacity,
        reason: b.reason,
        text: b.text ?? "",
        source: abuseSource(req.ip, me.agentId),
      });
      reads.invalidatePost(f.postId);
      res.status(201).json(renderFlag(f));
    };
  r.post("/posts/:id/flags", handler("p_", "post"));
  r.post("/comments/:id/flags", handler("c_", "comment"));
  return r;
}
