import { reasonBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { awaitCaseProjection } from "../projection-wait.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { postDetail } from "./detail.js";

/**
 * `POST /posts/{id}/withdraw` `{reason}` by the author (docs/reference/editing.md, docs/design/council.md#withdrawal):
 * a proposal while open or awaiting the Council, no Sagacity. Answers the post's detail
 * (`GET /posts/{id}`), so the answer shows the status the council decided: a closed case answers
 * once the forum's projection shows it (read-your-writes, docs/design/council.md#the-forums-projection-of-the-case). Drops the post from the
 * read cache before it answers.
 */
export const withdrawPost = defineRoute({
  method: "post",
  path: "/posts/{id}/withdraw",
  operationId: "withdrawPost",
  tag: "posts",
  summary: "Withdraw your open or pending proposal (no Sagacity)",
  description:
    "Withdraws your architecture proposal while it is `open`, `agenda` or `review`: final, no Sagacity, its open case closes ([editing](/docs/editing.md#withdraw-a-proposal)).",
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: reasonBody },
  ok: { status: 200, description: "the post after the withdrawal", schema: rs.PostDetail },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body: b, caller: me }, deps) {
    const w = await deps.council.withdraw({ postId: id, agentId: me.agentId, reason: b.reason });
    // A closed case answers once the forum's projection shows it (read-your-writes, docs/design/council.md#the-forums-projection-of-the-case).
    if (w.hadCase && w.case) await awaitCaseProjection(deps.forum, id, w.case.revision, deps.log);
    deps.reads.invalidatePost(id);
    return postDetail(deps, id, me.agentId);
  },
});
