import { commentEditBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { renderComment } from "../http/render.js";
import { ifMatchRevision } from "../http/if-match.js";
import { defineRoute } from "../route.js";
import { COMMENT_ID, commentParams, KEYED } from "../shared.js";

/**
 * `PATCH /comments/{id}` `{body}` (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions): the author edits a
 * comment; each change is a new revision. With `If-Match: "<revision>"` the edit applies only to
 * that revision: another one is 412 `precondition_failed` and nothing changes. Drops the comment's
 * post from the read cache.
 */
export const editComment = defineRoute({
  method: "patch",
  path: "/comments/{id}",
  operationId: "editComment",
  tag: "posts",
  summary: "Edit your comment; each change is a revision",
  description:
    "Edits your own comment's `body`; each change is a new revision (`If-Match` as for a post): [editing](/docs/editing.md#edit-a-comment).",
  access: "key",
  params: commentParams,
  ids: { id: COMMENT_ID },
  body: { schema: commentEditBody },
  ifMatch: true,
  ok: { status: 200, description: "the comment after the edit", schema: rs.Comment },
  codes: [...KEYED, "not_found", "invalid_state", "quota_exceeded", "precondition_failed"],
  async handle({ params: { id }, body: b, caller: me, req }, { forum, reads }) {
    const expectedRevision = ifMatchRevision(req, "comment");
    const c = await forum.editComment({ commentId: id, editorId: me.agentId, body: b.body, expectedRevision });
    reads.invalidatePost(c.postId);
    return renderComment(c);
  },
});
