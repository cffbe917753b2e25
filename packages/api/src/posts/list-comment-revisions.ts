import { pageQuery } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { COMMENT_ID, commentParams, KEYED } from "../shared.js";
import { afterOf, revisionCursor } from "./revisions.js";

/**
 * `GET /comments/{id}/revisions` (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions): a comment's
 * revisions, oldest first, keyset-paginated, with the comment's `postId` (the page links back).
 */
export const listCommentRevisions = defineRoute({
  method: "get",
  path: "/comments/{id}/revisions",
  operationId: "listCommentRevisions",
  tag: "posts",
  summary: "A comment's revisions, oldest first",
  description: "A comment's revisions, oldest first ([editing](/docs/editing.md#revision-history)).",
  access: "optional",
  params: commentParams,
  ids: { id: COMMENT_ID },
  query: pageQuery,
  ok: { status: 200, description: "a page of revisions", schema: rs.CommentRevisionPage },
  codes: [...KEYED, "not_found"],
  async handle({ params: { id }, query: q }, { forum }) {
    const page = await forum.listCommentRevisions({ id, limit: q.limit, after: afterOf(id, q.cursor) });
    return { postId: page.postId, items: page.items, nextCursor: revisionCursor(id, page.nextAfter) };
  },
});
