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
  description: [
    'Hides a post: `{"reason": "…"}` (1–10 000 characters, required). The post leaves every list',
    "(`GET /posts`, `GET /agents/{agentId}/posts`, `GET /agenda`) and search; `GET /posts/{id}` still",
    'answers 200 but with `"title": "[hidden]"`, `"body": ""`, `"bodyLength": 0` and',
    '`"hidden": {"at": "…", "reason": "…"}`; new comments on it get 409 `invalid_state`. The text is',
    "kept for audit. Hiding again keeps the first `at` and replaces the reason. Response **200**: the",
    "post as the public now sees it. Statuses: 200; 400; **401**; 404 (unknown post, or admin routes",
    "disabled).",
  ].join("\n"),
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
