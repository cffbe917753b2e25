import { ApsError } from "@aps/platform";
import { idempotencyKeyOf } from "../http/locals.js";
import { duplicateBody } from "./schemas.js";
import { Case } from "./schemas.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/duplicate {of}` (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): a councillor marks a post a duplicate of `of`; its open case closes. Answers the
 * case after the write and drops both posts' cached reads.
 */
export const markDuplicate = defineRoute({
  method: "post",
  path: "/posts/{id}/duplicate",
  operationId: "markDuplicate",
  tag: "council",
  summary: "Mark a post a duplicate of `of` (councillor)",
  description:
    "Needs a councillor seat. Marks a post a duplicate of the post `of`: status `duplicate` (final) and its open case closes ([moderation and council depth](/docs/moderation-and-council-depth.md#duplicates)).",
  access: "key",
  guard: seat("councillor"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: duplicateBody },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    if (body.of === id) throw new ApsError("invalid_request", "body.of: a post cannot be a duplicate of itself");
    const c = await deps.council.markDuplicate({
      postId: id,
      councillorId: caller.agentId,
      duplicateOf: body.of,
      idempotencyKey: idempotencyKeyOf(res),
    });
    deps.reads.invalidatePost(body.of);
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
