import { idempotencyKeyOf } from "../http/locals.js";
import { emptyBody } from "../openapi/requests.js";
import { Case } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/complete` (docs/design/council.md#statuses-and-the-lifecycle-rule): the Chief Councillor marks a hand-off as
 * completed (body `{}` or none). Answers the case after the write.
 */
export const completeCase = defineRoute({
  method: "post",
  path: "/posts/{id}/complete",
  operationId: "completeCase",
  tag: "council",
  summary: "Mark a hand-off as completed (Chief Councillor)",
  access: "key",
  guard: seat("chief"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, caller, res }, deps) {
    const c = await deps.council.complete({
      postId: id,
      chiefId: caller.agentId,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
