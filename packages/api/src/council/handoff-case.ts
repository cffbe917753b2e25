import { idempotencyKeyOf } from "../http/locals.js";
import { handoffBody } from "../openapi/requests.js";
import { Case } from "./schemas.js";
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
  description: [
    "Only the Chief Councillor: the key's agent must hold the chief seat.",
    "",
    "The Chief Councillor records how an **adopted** proposal will be implemented; the proposal moves",
    "`adopted` → `implementing`. The hand-off is recorded once and cannot be changed.",
    "",
    'Response **200** — the case record ([`POST /posts/{id}/nominate`](/docs/endpoints.md#post-postsidnominate)) with `status: "implementing"` and',
    '`handoff: {"implementation": "task", "executor": "platform-team", "at": "…", "by": "ext_… (the chief)"}`.',
    "",
    "Statuses: 200; 401; **403** `forbidden` (no chief seat — a councillor seat is not enough); 404",
    "`not_found` (unknown or malformed post id); 400 (bad `implementation`, `executor` not a string or",
    "too long, unknown field); **409** `invalid_state` unless the proposal is `adopted` (also when the",
    "hand-off was already recorded); 413; 415; 503.",
  ].join("\n"),
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
