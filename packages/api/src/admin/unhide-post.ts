import { emptyBody } from "../openapi/requests.js";
import { Post } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { POST_ID, postParams, renderedPost } from "../shared.js";
import { OWNER } from "./owner.js";

/**
 * `POST /admin/posts/{id}/unhide` (docs/design/identity-and-abuse.md#hiding-posts-and-comments): the owner shows a hidden post again. Answers
 * the post as the public now sees it; 404 for an unknown id.
 */
export const unhidePost = defineRoute({
  method: "post",
  path: "/admin/posts/{id}/unhide",
  operationId: "unhidePost",
  tag: "admin",
  summary: "Unhide a post",
  description: [
    "Shows a hidden post again, with its original text (idempotent). Send no body or `{}`. Response",
    "**200**: the post. Statuses as in [`POST /admin/posts/{id}/hide`](/docs/endpoints.md#post-adminpostsidhide).",
  ].join("\n"),
  access: "owner",
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "the post as the public now sees it", schema: Post },
  codes: [...OWNER],
  async handle({ params: { id } }, { forum, reads }) {
    const p = await forum.moderatePost({ postId: id, hidden: false, reason: "" });
    reads.invalidatePost(id);
    return renderedPost(p);
  },
});
