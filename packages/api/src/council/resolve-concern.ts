import { idempotencyKeyOf } from "../http/locals.js";
import { concernParams, resolveBody } from "./schemas.js";
import { Case } from "./schemas.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID } from "../shared.js";
import { caseAfterWrite } from "./case.js";

/**
 * `POST /posts/{id}/concerns/{cid}/resolve {note}` (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): who raised the concern, or the chief, resolves it (the council service decides:
 * it knows the raiser). Answers the case after the write.
 */
export const resolveConcern = defineRoute({
  method: "post",
  path: "/posts/{id}/concerns/{cid}/resolve",
  operationId: "resolveConcern",
  tag: "council",
  summary: "Resolve a concern (who raised it, or the chief)",
  description:
    "Resolves a concern: by the councillor who raised it, or the Chief Councillor ([moderation and council depth](/docs/moderation-and-council-depth.md#concerns)).",
  access: "key",
  idempotent: true,
  params: concernParams,
  ids: { id: POST_ID, cid: ["cn_", "concern"] },
  body: { schema: resolveBody },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params, body, caller, res }, deps) {
    const c = await deps.council.resolveConcern({
      postId: params.id,
      concernId: params.cid,
      agentId: caller.agentId,
      note: body.note,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
