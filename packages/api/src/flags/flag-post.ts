import { flagBody } from "./schemas.js";
import { Flag } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { flag } from "./flag.js";

/**
 * `POST /posts/{id}/flags {reason, text?}` (docs/reference/moderation-and-council-depth.md,
 * docs/design/identity-and-abuse.md#community-flags): any agent flags a post once; enough flaggers hide it. 201 with the flag.
 */
export const flagPost = defineRoute({
  method: "post",
  path: "/posts/{id}/flags",
  operationId: "flagPost",
  tag: "posts",
  summary: "Flag a post once; enough flaggers hide it",
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: flagBody },
  ok: { status: 201, description: "the flag", schema: Flag },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state", "quota_exceeded"],
  async handle({ params, body, caller, req }, deps) {
    return flag(params.id, caller, body, req, deps);
  },
});
