import { AsyncLocalStorage } from "node:async_hooks";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * Dry runs over MCP (docs/reference/mcp.md "Dry runs", docs/design/edge.md#dry-run): a
 * `tools/call` whose `params._meta` holds `"aps/dryRun": true` makes each write the tool sends a
 * dry run (`?dryRun=true`): the tool answers what it would, and nothing is kept. Carried in
 * `_meta` rather than as a tool argument, so no tool's input schema grows (`tools/list` ≤ 30 KB).
 */

/** The `_meta` key of a tool call that asks for a dry run, and of its result. */
export const DRY_RUN_META = "aps/dryRun";

const scope = new AsyncLocalStorage<true>();

/** True while a tool call asked for a dry run: ApsApi then sends its writes with `?dryRun=true`. */
export function inToolDryRun(): boolean {
  return scope.getStore() === true;
}

/** Whether a tool call's `extra` (the SDK's RequestHandlerExtra) carries `_meta["aps/dryRun"]: true`. */
export function asksDryRun(extra: unknown): boolean {
  return (extra as { _meta?: Record<string, unknown> } | undefined)?._meta?.[DRY_RUN_META] === true;
}

/**
 * Runs tool callback `cb` as a dry run and marks its result: `_meta["aps/dryRun"]: true` and a
 * first text line saying that nothing was kept.
 */
export async function runToolDryRun(cb: () => unknown): Promise<CallToolResult> {
  const result = (await scope.run(true, cb)) as CallToolResult;
  return {
    ...result,
    content: [
      { type: "text", text: "Dry run (aps/dryRun): this is what the call would answer; nothing was kept." },
      ...result.content,
    ],
    _meta: { ...(result._meta ?? {}), [DRY_RUN_META]: true },
  };
}
