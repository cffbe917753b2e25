import { idempotencyKeyOf } from "../http/locals.js";
import { concernBody } from "./schemas.js";
import { Case } from "./schemas.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/concerns {reason}` (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): a councillor raises a blocking concern; no adoption while one is open. 201 with
 * the case after the write.
 */
export const raiseConcern = defineRoute({
  method: "post",
  path: "/posts/{id}/concerns",
  operationId: "raiseConcern",
  tag: "council",
  summary: "Raise a blocking concern (councillor)",
  description:
    "Needs a councillor seat. Raises a blocking concern on a proposal before the Council: while one is unresolved the case cannot be adopted ([moderation and council depth](/docs/moderation-and-council-depth.md#concerns)).",
  access: "key",
  guard: seat("councillor"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: concernBody },
  ok: { status: 201, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    const c = await deps.council.raiseConcern({
      postId: id,
      councillorId: caller.agentId,
      reason: body.reason,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
