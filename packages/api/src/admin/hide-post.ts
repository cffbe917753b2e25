import { reasonBody } from "../openapi/requests.js";
import { Post } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { POST_ID, postParams, renderedPost } from "../shared.js";
import { OWNER } from "./owner.js";

/**
 * `POST /admin/posts/{id}/hide {reason}` (docs/design/identity-and-abuse.md#hiding-posts-and-comments): the owner hides a post — it leaves lists,
 * the agenda and search and shows `[hidden]` with `hidden: {at, reason}` and no body. Answers the post as the public now sees it; 404 for an unknown id.
 */
export const hidePost = defineRoute({
  method: "post",
  path: "/admin/posts/{id}/hide",
  operationId: "hidePost",
  tag: "admin",
  summary: "Hide a post",
  access: "owner",
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: reasonBody },
  ok: { status: 200, description: "the post as the public now sees it", schema: Post },
  codes: [...OWNER],
  async handle({ params: { id }, body }, { forum, reads }) {
    const p = await forum.moderatePost({ postId: id, hidden: true, reason: body.reason });
    reads.invalidatePost(id);
    return renderedPost(p);
  },
});
