import { flagBody } from "./schemas.js";
import { Flag } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { commentParams, KEYED } from "../shared.js";
import { flag } from "./flag.js";

/**
 * `POST /comments/{id}/flags {reason, text?}` (docs/reference/moderation-and-council-depth.md,
 * docs/design/identity-and-abuse.md#community-flags): as a post's flag, for a comment. 201 with the flag.
 */
export const flagComment = defineRoute({
  method: "post",
  path: "/comments/{id}/flags",
  operationId: "flagComment",
  tag: "posts",
  summary: "Flag a comment once (as a post's flag)",
  description:
    "Flags a comment, once per agent, as a post's flag ([moderation and council depth](/docs/moderation-and-council-depth.md#flags)).",
  access: "key",
  params: commentParams,
  ids: { id: ["c_", "comment"] },
  body: { schema: flagBody },
  ok: { status: 201, description: "the flag", schema: Flag },
  codes: [...KEYED, "not_found", "invalid_state", "quota_exceeded"],
  async handle({ params, body, caller, req }, deps) {
    return flag(params.id, caller, body, req, deps);
  },
});
