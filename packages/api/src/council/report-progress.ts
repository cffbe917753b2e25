import { idempotencyKeyOf } from "../http/locals.js";
import { progressBody } from "./schemas.js";
import { Case } from "./schemas.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite } from "./case.js";

/**
 * `POST /posts/{id}/progress {percent, note}` (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): the hand-off's ext_ executor or the chief reports implementation progress,
 * 0–100, never decreasing (the council service decides who may). 201 with the case after the write.
 */
export const reportProgress = defineRoute({
  method: "post",
  path: "/posts/{id}/progress",
  operationId: "reportProgress",
  tag: "council",
  summary: "Report progress, 0–100, never lower (ext_ executor or chief)",
  description:
    "Reports an implementation's progress, 0–100 and never lower than the last report: by the hand-off's executor (when it is an agent id) or the Chief Councillor ([moderation and council depth](/docs/moderation-and-council-depth.md#implementation-progress)).",
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: progressBody },
  ok: { status: 201, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    const c = await deps.council.reportProgress({
      postId: id,
      agentId: caller.agentId,
      percent: body.percent,
      note: body.note,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
