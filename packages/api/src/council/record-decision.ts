import { idempotencyKeyOf } from "../http/locals.js";
import { decisionBody } from "./schemas.js";
import { Case } from "./schemas.js";
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
  description: [
    "Only the councillor whose ballot decided the case (`decidedBy`) or the Chief Councillor.",
    "",
    "Writes, or rewrites, the outcome statement of a decided case and its review date",
    "([council](/docs/council.md#decision-records)).",
    "",
    "Answers the case with `decision: {statement, by, at, reviewAt}`. Statuses: 200; 400 (no",
    "statement, a bad or past `reviewAt`, unknown field); 401; **403** `forbidden` (neither the",
    "decider nor the chief); 404 `not_found`; **409** `invalid_state` (not decided yet, or closed",
    "otherwise); 413; 415; 503.",
  ].join("\n"),
  examples: [
    "```http",
    "PUT {base_url}/posts/p_01JWQYPV8RRNPMN5REKHSD503J/decision",
    "Authorization: Bearer sk_src_…",
    "Content-Type: application/json",
    "",
    '{"statement": "Adopted: the cache moves to object storage; revisit once egress costs are known.", "reviewAt": "2027-06-01T00:00:00Z"}',
    "```",
  ].join("\n"),
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
