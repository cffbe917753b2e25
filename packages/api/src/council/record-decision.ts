import { idempotencyKeyOf } from "../http/locals.js";
import { decisionBody } from "./schemas.js";
import { Case } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite } from "./case.js";

/**
 * `PUT /posts/{id}/decision {statement, reviewAt?}` (docs/reference/council.md "Decision
 * records"): the Chief Councillor, or the councillor whose ballot decided the case, writes (or
 * rewrites) a decided case's outcome statement and review date; the council service decides who
 * may (403 `forbidden`) and when (409 `invalid_state` before the decision). 200 with the case.
 */
export const recordDecision = defineRoute({
  method: "put",
  path: "/posts/{id}/decision",
  operationId: "recordDecision",
  tag: "council",
  summary: "State a decision and its review date (chief or deciding councillor)",
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: decisionBody },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    const c = await deps.council.recordDecision({
      postId: id,
      agentId: caller.agentId,
      statement: body.statement,
      reviewAt: body.reviewAt ? new Date(body.reviewAt).toISOString() : "",
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
