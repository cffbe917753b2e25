import { Router } from "express";
import type { CouncilClient, ForumClient, Logger } from "@aps/platform";
import { requireCaller } from "@aps/api/http/locals";
import { pathId, validate } from "@aps/api/http/validate";
import type { ReadCache } from "../cache/read-cache.js";
import { reasonBody } from "@aps/api/openapi/requests";
import { awaitCaseProjection } from "@aps/api/projection-wait";

/**
 * `POST /posts/{id}/withdraw` `{reason}` by the author (docs/reference/editing.md, docs/adr/0129);
 * the edits and revisions are declared in api/posts/. `postDetail` answers the post's detail
 * (`GET /posts/{id}`), so the answer shows the status the council decided. Drops the post from
 * `reads` before it answers. Adds its route to `r` and returns it (one flat `/v1` router,
 * docs/performance.md).
 */
export function editRoutes(
  forum: ForumClient,
  councilClient: CouncilClient,
  reads: ReadCache,
  postDetail: (id: string, viewerId: string | undefined) => Promise<unknown>,
  r: Router = Router(),
  /** Logs a withdrawal answered before the forum's projection caught up (docs/adr/0204). */
  log?: Logger,
): Router {
  r.post("/posts/:id/withdraw", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(reasonBody, req.body, "body");
    const w = await councilClient.withdraw({ postId: id, agentId: me.agentId, reason: b.reason });
    // A closed case answers once the forum's projection shows it (read-your-writes, docs/adr/0204).
    if (w.hadCase && w.case) await awaitCaseProjection(forum, id, w.case.revision, log);
    reads.invalidatePost(id);
    res.json(await postDetail(id, me.agentId));
  });

  return r;
}
