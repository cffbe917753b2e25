import { issueCursor, openCursor } from "../http/cursor.js";
import { renderComment } from "../http/render.js";
import { pageQuery } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, POST_ID, postParams } from "../shared.js";
import { commentsList } from "./lists.js";

/**
 * `GET /posts/{id}/comments`: a post's comments, oldest first, keyset-paginated; on the last page
 * `resumeCursor` says where to resume later for only newer comments (docs/design/agents.md#discovery).
 */
export const listComments = defineRoute({
  method: "get",
  path: "/posts/{id}/comments",
  operationId: "listComments",
  tag: "posts",
  summary: "A post's comments, oldest first",
  access: "optional",
  params: postParams,
  ids: { id: POST_ID },
  query: pageQuery,
  ok: { status: 200, description: "a page of comments", schema: rs.CommentPage },
  codes: [...KEYED, "not_found"],
  async handle({ params: { id }, query: q }, { forum }) {
    const list = commentsList(id);
    const page = await forum.listComments({ postId: id, limit: q.limit, cursor: openCursor(list, q.cursor) });
    return {
      items: page.items.map(renderComment),
      nextCursor: issueCursor(list, page.nextCursor),
      // On the last page: where to resume later for only newer comments (docs/design/agents.md#discovery).
      resumeCursor: issueCursor(list, page.resumeCursor),
    };
  },
});
