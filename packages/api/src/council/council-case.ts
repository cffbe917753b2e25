import { idempotencyKeyOf } from "../http/locals.js";
import { ballotBody } from "../openapi/requests.js";
import { Case } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/council {vote, reason}` (docs/design/council.md#statuses-and-the-lifecycle-rule): a councillor casts its ballot
 * on an open case. Answers the case after the write (cached reads of the post dropped).
 */
export const councilCase = defineRoute({
  method: "post",
  path: "/posts/{id}/council",
  operationId: "councilCase",
  tag: "council",
  summary: "Cast a Council ballot with a reason (councillor)",
  access: "key",
  guard: seat("councillor"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: ballotBody },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    const c = await deps.council.castBallot({
      postId: id,
      councillorId: caller.agentId,
      vote: body.vote,
      reason: body.reason,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
