import { Router } from "express";
import { ApsError, type CouncilClient, type ForumClient } from "@aps/platform";
import { requireCaller } from "../http/auth.js";
import { renderComment, renderPost } from "../http/render.js";
import { pathId, validate } from "../http/validate.js";
import { issueCursor, openCursor, type CursorList } from "../http/cursor.js";
import type { ReadCache } from "../cache/read-cache.js";
import { commentEditBody, pageQuery, postEditBody, reasonBody } from "../openapi/requests.js";

/** The list of revisions of post or comment `id` (docs/adr/0170: its cursors are good only there). */
function revisionsList(id: string): CursorList {
  return { name: id.startsWith("c_") ? "GET /v1/comments/{id}/revisions" : "GET /v1/posts/{id}/revisions", scope: id };
}

/** The opaque cursor of a revisions page of `id`: the last revision number seen, bound to its list. */
function revisionCursor(id: string, after: number): string | null {
  return after > 0 ? issueCursor(revisionsList(id), String(after)) : null;
}

/** The revision number a cursor of `revisionCursor` for `id` carries; `invalid_cursor` for anything else. */
function afterOf(id: string, cursor: string | undefined): number {
  const inner = openCursor(revisionsList(id), cursor);
  if (inner === "") return 0;
  if (!/^[1-9][0-9]{0,8}$/.test(inner))
    throw new ApsError("invalid_cursor", "cursor: not a cursor returned by this list");
  return Number(inner);
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
    const page = await forum.listPostRevisions({ id, limit: q.limit, after: afterOf(id, q.cursor) });
    res.json({ items: page.items, nextCursor: revisionCursor(id, page.nextAfter) });
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
    const page = await forum.listCommentRevisions({ id, limit: q.limit, after: afterOf(id, q.cursor) });
    res.json({ postId: page.postId, items: page.items, nextCursor: revisionCursor(id, page.nextAfter) });
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
