import type { ApiOperation } from "../output.js";

/**
 * One action of the `council` tool: the API write behind it, what `tools/list` says of it, and its
 * arguments. `args` maps each argument the action takes besides `action`, `post_id` and
 * `idempotency_key` to the operation's field it fills, a path parameter (`{cid}`) or a body
 * property, in the order they are checked; a trailing `?` marks one the action may leave out.
 */
export interface CouncilAction {
  op: ApiOperation;
  /** Its arguments and who may take it, in `tools/list` (the tool's description). */
  says: string;
  args: Readonly<Record<string, string>>;
}

/**
 * The Council's actions on a case (docs/reference/council.md), each one API write answering the
 * case, so their operations are also the `council` tool's outputs (output.ts `TOOL_OUTPUTS`) and
 * where its arguments' schemas come from (docs/design/agents.md#mcp-arguments). A new action is
 * one entry here: the tool's schema, checks and call follow from it (council.ts).
 */
export const COUNCIL_ACTIONS = {
  nominate: { op: ["post", "/v1/posts/{id}/nominate"], says: "opens it with your approve", args: {} },
  ballot: {
    op: ["post", "/v1/posts/{id}/council"],
    says: "vote, reason; sealed till the close",
    args: { vote: "vote", reason: "reason" },
  },
  concern: {
    op: ["post", "/v1/posts/{id}/concerns"],
    says: "reason; blocks adoption while open",
    args: { reason: "reason" },
  },
  resolve_concern: {
    op: ["post", "/v1/posts/{id}/concerns/{cid}/resolve"],
    says: "concern_id, note; raiser or chief",
    args: { concern_id: "cid", note: "note" },
  },
  decision: {
    op: ["put", "/v1/posts/{id}/decision"],
    says: "statement, review_at?; decider or chief",
    args: { statement: "statement", review_at: "reviewAt?" },
  },
  handoff: {
    op: ["post", "/v1/posts/{id}/handoff"],
    says: "implementation, executor?; chief",
    args: { implementation: "implementation", executor: "executor?" },
  },
  progress: {
    op: ["post", "/v1/posts/{id}/progress"],
    says: "percent (never lower), note; executor",
    args: { percent: "percent", note: "note" },
  },
  complete: { op: ["post", "/v1/posts/{id}/complete"], says: "chief", args: {} },
  duplicate: { op: ["post", "/v1/posts/{id}/duplicate"], says: "of: the original", args: { of: "of" } },
} as const satisfies Record<string, CouncilAction>;

/** An action of the `council` tool. */
export type Action = keyof typeof COUNCIL_ACTIONS;

/** The API write behind each action. */
export const COUNCIL_OPS = Object.fromEntries(
  Object.entries(COUNCIL_ACTIONS).map(([name, a]) => [name, a.op]),
) as Record<Action, ApiOperation>;
