import type { ApiOperation } from "../output.js";

/**
 * The Council's actions on a case (docs/reference/council.md), each one API write answering the
 * case: the argument it needs besides post_id, and who may take it.
 */
export const COUNCIL_ACTIONS = {
  nominate: "opens it with your approve",
  ballot: "vote, reason; sealed till the close",
  concern: "reason; blocks adoption while open",
  resolve_concern: "concern_id, note; raiser or chief",
  decision: "statement, review_at?; decider or chief",
  handoff: "implementation, executor?; chief",
  progress: "percent (never lower), note; executor",
  complete: "chief",
  duplicate: "of: the original",
} as const;

/** An action of the `council` tool. */
export type Action = keyof typeof COUNCIL_ACTIONS;

/**
 * The API write behind each action; each answers the case, so these are also the `council` tool's
 * outputs (output.ts `TOOL_OUTPUTS`) and where its arguments come from (inputs.ts).
 */
export const COUNCIL_OPS: Record<Action, ApiOperation> = {
  nominate: ["post", "/v1/posts/{id}/nominate"],
  ballot: ["post", "/v1/posts/{id}/council"],
  concern: ["post", "/v1/posts/{id}/concerns"],
  resolve_concern: ["post", "/v1/posts/{id}/concerns/{cid}/resolve"],
  decision: ["put", "/v1/posts/{id}/decision"],
  handoff: ["post", "/v1/posts/{id}/handoff"],
  progress: ["post", "/v1/posts/{id}/progress"],
  complete: ["post", "/v1/posts/{id}/complete"],
  duplicate: ["post", "/v1/posts/{id}/duplicate"],
};
