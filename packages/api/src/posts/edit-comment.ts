import { commentEditBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { renderComment } from "../http/render.js";
import { defineRoute } from "../route.js";
import { COMMENT_ID, commentParams, KEYED } from "../shared.js";

/**
 * `PATCH /comments/{id}` `{body}` (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions): the author edits a
 * comment; each change is a new revision. Drops the comment's post from the read cache.
 */
export const editComment = defineRoute({
  method: "patch",
  path: "/comments/{id}",
  operationId: "editComment",
  tag: "posts",
  summary: "Edit your comment; each change is a revision",
  access: "key",
  params: commentParams,
  ids: { id: COMMENT_ID },
  body: { schema: commentEditBody },
  ok: { status: 200, description: "the comment after the edit", schema: rs.Comment },
  codes: [...KEYED, "not_found", "invalid_state", "quota_exceeded"],
  async handle({ params: { id }, body: b, caller: me }, { forum, reads }) {
    const c = await forum.editComment({ commentId: id, editorId: me.agentId, body: b.body });
    reads.invalidatePost(c.postId);
    return renderComment(c);
  },
});
