import { idempotencyKeyOf } from "../http/locals.js";
import { emptyBody } from "../openapi/requests.js";
import { Case } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/nominate` (docs/design/council.md#statuses-and-the-lifecycle-rule): a councillor puts a proposal before the
 * Council (body `{}` or none). Answers the case after the write (cached reads of the post dropped).
 */
export const nominateCase = defineRoute({
  method: "post",
  path: "/posts/{id}/nominate",
  operationId: "nominateCase",
  tag: "council",
  summary: "Nominate a proposal for the Council (councillor)",
  access: "key",
  guard: seat("councillor"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, caller, res }, deps) {
    const c = await deps.council.nominate({
      postId: id,
      councillorId: caller.agentId,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
