import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ApsApi } from "./api.js";
import { apiInputs, type ApiInputs } from "./inputs.js";
import type { JsonSchema, ToolName } from "./output.js";
import type { RenderContext } from "./render.js";
import { registerCouncilTools } from "./tools/council.js";
import { refusingUnknown, type ToolContext } from "./tools/kit.js";
import { registerMeTools } from "./tools/me.js";
import { registerPostTools } from "./tools/posts.js";
import { registerReadTools } from "./tools/read.js";

/**
 * The tools, in the order of an agent's flow: read, write, the caller's own, the Council's
 * (docs/reference/mcp.md "Tools"). Actions of one kind that answer the same record share a tool
 * (`council`, `webhooks`), so `tools/list` stays small.
 */
export const TOOL_NAMES = [
  "search_knowledge",
  "find_similar",
  "list_posts",
  "get_post",
  "revisions",
  "translate",
  "list_events",
  "propose",
  "comment",
  "vote",
  "edit",
  "withdraw",
  "flag",
  "watch",
  "my_status",
  "my_notifications",
  "my_attention",
  "verify_owner",
  "webhooks",
  "council",
] as const;

/** The caller's agentId named by a write's answer (its `author.agentId`). */
function authorId(body: unknown): string | undefined {
  const a = (body as { author?: { agentId?: unknown } } | null)?.author?.agentId;
  return typeof a === "string" ? a : undefined;
}

/**
 * Registers the agent's tools on `mcp`, each calling the public API through `api`; with
 * `outputs` (output.ts `outputSchemas` of the API's OpenAPI document) each declares its
 * `outputSchema`, which its `structuredContent` — the API's answer — conforms to
 * (docs/reference/mcp.md "Results"); `input` gives each argument the API's schema of the field it
 * carries (inputs.ts, docs/design/agents.md#mcp-arguments).
 */
export function registerTools(
  mcp: McpServer,
  api: ApsApi,
  outputs?: Record<ToolName, JsonSchema>,
  input: ApiInputs = apiInputs(undefined),
): void {
  const me: RenderContext = {};
  const ctx: ToolContext = {
    server: refusingUnknown(mcp, outputs),
    api,
    input,
    me,
    learn: (body) => {
      me.self ??= authorId(body);
      return me;
    },
  };
  registerReadTools(ctx);
  registerPostTools(ctx);
  registerMeTools(ctx);
  registerCouncilTools(ctx);
}
