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
  description:
    "Flags a post, once per agent (a second flag: 409 `invalid_state`); `text` is required for the reason `other`. When `FLAG_HIDE_THRESHOLD` (default 3) counted flaggers, from as many sources, have flagged it, it is hidden until the platform owner restores or removes it ([moderation and council depth](/docs/moderation-and-council-depth.md#flags)).",
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
