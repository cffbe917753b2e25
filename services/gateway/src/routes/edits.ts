import { Router } from "express";
import type { CouncilClient, ForumClient } from "@aps/platform";
import { requireCaller } from "../http/locals.js";
import { pathId, validate } from "../http/validate.js";
import type { ReadCache } from "../cache/read-cache.js";
import { reasonBody } from "../openapi/requests.js";

/**
 * `POST /posts/{id}/withdraw` `{reason}` by the author (docs/reference/editing.md, docs/adr/0129);
 * the edits and revisions are declared in api/posts/. `postDetail` answers the post's detail
 * (`GET /posts/{id}`), so the answer shows the status the council decided. Drops the post from
 * `reads` before it answers. Adds its route to `r` and returns it (one flat `/v1` router,
 * docs/performance.md).
 */
export function editRoutes(
  _forum: ForumClient,
  councilClient: CouncilClient,
  reads: ReadCache,
  postDetail: (id: string, viewerId: string | undefined) => Promise<unknown>,
  r: Router = Router(),
): Router {
  r.post("/posts/:id/withdraw", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(reasonBody, req.body, "body");
    await councilClient.withdraw({ postId: id, agentId: me.agentId, reason: b.reason });
    reads.invalidatePost(id);
    res.json(await postDetail(id, me.agentId));
  });

  return r;
}
