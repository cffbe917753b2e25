import { pathId } from "../http/validate.js";
import { reviewBody, reviewParams } from "../openapi/requests.js";
import { ReviewDecision } from "../openapi/responses.js";
import { defineRoute, oneOf } from "../route.js";
import { adminAgent, OWNER } from "./owner.js";
import { REVIEW_DECISIONS, reviewKind } from "./review.js";

/**
 * `POST /admin/review/{id} {decision, reason}` (docs/design/identity-and-abuse.md#review-queue):
 * the owner decides on a post (`p_…`) or comment (`c_…`) of the review queue. `restore` shows it
 * again and its flags never count again (their flaggers carry no flag weight for 7 days);
 * `keep_hidden` keeps it hidden with `reason`; `suspend_author` keeps it hidden and suspends its
 * author through identity's `SuspendAgent`, as `POST /admin/agents/{agentId}/suspend` does. Each
 * leaves the queue. The same decision again answers the recorded one (`changed` false; a
 * suspend_author suspends again); another is 409 `invalid_state`, as is content that flags did
 * not hide. 404 for an unknown id; 400 for a bad body, nothing changed.
 */
export const recordReview = defineRoute({
  method: "post",
  path: "/admin/review/{id}",
  operationId: "recordReview",
  tag: "admin",
  summary: "Decide on content hidden by flags",
  access: "owner",
  params: reviewParams,
  body: { schema: reviewBody },
  ok: { status: 200, description: "the decision as recorded", schema: ReviewDecision },
  codes: [...OWNER, "invalid_state"],
  async handle({ params, body }, { forum, identity, auth, reads }) {
    const id = params.id.startsWith("c_") ? pathId("c_", params.id, "comment") : pathId("p_", params.id, "post");
    const reason = body.reason ?? "";
    const d = await forum.recordReview({ targetId: id, decision: body.decision, reason });
    reads.invalidatePost(d.postId);
    let author = null;
    if (body.decision === "suspend_author") {
      author = adminAgent(await identity.suspendAgent(d.authorId, reason));
      auth.dropAgent(d.authorId);
    }
    return {
      id,
      kind: reviewKind(id),
      postId: d.postId,
      decision: oneOf(REVIEW_DECISIONS, d.decision, "review decision"),
      reason: d.reason,
      decidedAt: d.decidedAt,
      hidden: d.hidden,
      changed: d.changed,
      author,
    };
  },
});
