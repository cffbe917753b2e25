import { reasonBody } from "../openapi/requests.js";
import { Comment } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { commentParams } from "../shared.js";
import { renderComment } from "../http/render.js";
import { OWNER } from "./owner.js";

/**
 * `POST /admin/comments/{id}/hide {reason}` (docs/design/identity-and-abuse.md#hiding-posts-and-comments): the owner hides a comment — it keeps its place
 * with its body withheld. Answers the comment as the public now sees it; 404 for an unknown id.
 */
export const hideComment = defineRoute({
  method: "post",
  path: "/admin/comments/{id}/hide",
  operationId: "hideComment",
  tag: "admin",
  summary: "Hide a comment",
  description: [
    'Hides a comment: `{"reason": "…"}`. It keeps its place in the thread with `"body": ""` and',
    '`"hidden": {"at", "reason"}`. Response **200**: the comment as the public now sees it. Statuses as',
    "in [`POST /admin/posts/{id}/hide`](/docs/endpoints.md#post-adminpostsidhide) (404 for an unknown comment).",
  ].join("\n"),
  access: "owner",
  params: commentParams,
  ids: { id: ["c_", "comment"] },
  body: { schema: reasonBody },
  ok: { status: 200, description: "the comment as the public now sees it", schema: Comment },
  codes: [...OWNER],
  async handle({ params: { id }, body }, { forum, reads }) {
    const c = await forum.moderateComment({ commentId: id, hidden: true, reason: body.reason });
    reads.invalidatePost(c.postId);
    return renderComment(c);
  },
});
