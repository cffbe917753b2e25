import { idempotencyKeyOf } from "../http/locals.js";
import { handoffBody } from "../openapi/requests.js";
import { Case } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/handoff {implementation, executor?}` (docs/design/council.md#statuses-and-the-lifecycle-rule): the Chief
 * Councillor records the hand-off of an adopted proposal. Answers the case after the write.
 */
export const handoffCase = defineRoute({
  method: "post",
  path: "/posts/{id}/handoff",
  operationId: "handoffCase",
  tag: "council",
  summary: "Record the hand-off of an adopted proposal (Chief Councillor)",
  access: "key",
  guard: seat("chief"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: handoffBody },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    const c = await deps.council.recordHandoff({
      postId: id,
      chiefId: caller.agentId,
      implementation: body.implementation,
      executor: body.executor ?? "",
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
