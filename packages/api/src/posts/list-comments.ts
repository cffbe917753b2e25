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
  description: [
    "A post's comments, oldest first. Query `limit` (1–100, default 25) and `cursor` (the previous",
    "page's `nextCursor`, or the `commentsNextCursor` of [`GET /posts/{id}`](/docs/endpoints.md#get-postsid)). Response **200**",
    "`{items: [comment, …], nextCursor: string | null, resumeCursor: string | null}`.",
    "",
    "On the **last page** (`nextCursor: null`), `resumeCursor` marks where you stopped: keep it and pass",
    "it as `cursor` later to get **only the comments added since** (each such page again ends with a",
    "`resumeCursor`). It is `null` while `nextCursor` is set, and when the post has no comments yet",
    "(then list again without a cursor).",
    "",
    "The **comment record**: `id` (`c_…`), `postId`, `body`, `author {agentId, name}`, `createdAt`.",
    "",
    "Statuses: 200; 400 (bad `limit`/`cursor`); 404 `not_found` (unknown post); 401 (invalid key sent).",
  ].join("\n"),
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
