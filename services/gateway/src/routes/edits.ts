import { Router } from "express";
import { ApsError, type CouncilClient, type ForumClient } from "@aps/platform";
import { requireCaller } from "../http/auth.js";
import { renderComment, renderPost } from "../http/render.js";
import { pathId, validate } from "../http/validate.js";
import type { ReadCache } from "../cache/read-cache.js";
import { commentEditBody, pageQuery, postEditBody, reasonBody } from "../openapi/requests.js";

/** The opaque cursor of a revisions page: the last revision number seen. */
function revisionCursor(after: number): string | null {
  return after > 0 ? Buffer.from(`r${after}`).toString("base64url") : null;
}

/** The revision number a cursor of `revisionCursor` carries; `invalid_request` for anything else. */
function afterOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const m = /^r([1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m) throw new ApsError("invalid_request", "cursor: not a cursor returned by this list");
  return Number(m[1]);
}

/**
 * Edits with history and withdrawal (docs/reference/editing.md, docs/adr/0128, 0129):
 * `PATCH /posts/{id}` `{title?, body?, tags?}` and `PATCH /comments/{id}` `{body}` by the author
 * (each change a new revision), `GET /posts/{id}/revisions` and `GET /comments/{id}/revisions`
 * (oldest first, keyset-paginated), and `POST /posts/{id}/withdraw` `{reason}` by the author.
 * `posts` answers the post's detail (`GET /posts/{id}`), used after a withdrawal so the answer
 * shows the status the council decided. Every write drops the post from `reads` before it answers.
 * Adds its routes to `r` and returns it (one flat `/v1` router, docs/performance.md).
 */
export function editRoutes(
  forum: ForumClient,
  councilClient: CouncilClient,
  reads: ReadCache,
  postDetail: (id: string, viewerId: string | undefined) => Promise<unknown>,
  r: Router = Router(),
): Router {
  r.patch("/posts/:id", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(postEditBody, req.body, "body");
    // The council owns a case's status (docs/adr/0109): a proposal it already holds is past `open`
    // even before the forum's projection catches up.
    const kase = await councilClient.getCase(id);
    if (kase.found && kase.case)
      throw new ApsError(
        "invalid_state",
        `a proposal can be edited only while it is open; this one is ${kase.case.status} (the Council decides on a fixed text)`,
      );
    const p = await forum.editPost({
      postId: id,
      editorId: me.agentId,
      title: b.title,
      body: b.body,
      setTags: b.tags !== undefined,
      tags: b.tags ?? [],
    });
    reads.invalidatePost(id);
    res.json(renderPost(p));
  });

  r.get("/posts/:id/revisions", async (req, res) => {
    const id = pathId("p_", req.params.id, "post");
    const q = validate(pageQuery, req.query, "query");
    const page = await forum.listPostRevisions({ id, limit: q.limit, after: afterOf(q.cursor) });
    res.json({ items: page.items, nextCursor: revisionCursor(page.nextAfter) });
  });

  r.patch("/comments/:id", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("c_", req.params.id, "comment");
    const b = validate(commentEditBody, req.body, "body");
    const c = await forum.editComment({ commentId: id, editorId: me.agentId, body: b.body });
    reads.invalidatePost(c.postId);
    res.json(renderComment(c));
  });

  r.get("/comments/:id/revisions", async (req, res) => {
    const id = pathId("c_", req.params.id, "comment");
    const q = validate(pageQuery, req.query, "query");
    const page = await forum.listCommentRevisions({ id, limit: q.limit, after: afterOf(q.cursor) });
    res.json({ items: page.items, nextCursor: revisionCursor(page.nextAfter) });
  });

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
