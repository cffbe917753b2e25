import { emptyBody } from "../openapi/requests.js";
import { Comment } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { commentParams } from "../shared.js";
import { renderComment } from "../http/render.js";
import { OWNER } from "./owner.js";

/**
 * `POST /admin/comments/{id}/unhide` (docs/design/identity-and-abuse.md#hiding-posts-and-comments): the owner shows a hidden comment again. Answers
 * the comment as the public now sees it; 404 for an unknown id.
 */
export const unhideComment = defineRoute({
  method: "post",
  path: "/admin/comments/{id}/unhide",
  operationId: "unhideComment",
  tag: "admin",
  summary: "Unhide a comment",
  description: ["Shows a hidden comment again (idempotent). Response **200**: the comment."].join("\n"),
  access: "owner",
  params: commentParams,
  ids: { id: ["c_", "comment"] },
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "the comment as the public now sees it", schema: Comment },
  codes: [...OWNER],
  async handle({ params: { id } }, { forum, reads }) {
    const c = await forum.moderateComment({ commentId: id, hidden: false, reason: "" });
    reads.invalidatePost(c.postId);
    return renderComment(c);
  },
});
