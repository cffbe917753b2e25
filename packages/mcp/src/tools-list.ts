import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/** A request handler as the SDK's protocol layer keeps it. */
type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * Drops from a `tools/list` answer what the SDK adds to every tool and that says nothing (docs/reference/mcp.md
 * "Results"): the draft-07 `$schema` label on each schema (our schemas use only keywords every
 * dialect shares; MCP's default dialect applies), `execution: {taskSupport: "forbidden"}` (the
 * default when absent), and an output schema's empty `properties` and open
 * `additionalProperties: {}` (both mean "anything", as their absence does). 3.4 KB of 33 KB.
 */
export function compactTools(answer: unknown): unknown {
  const tools = (answer as { tools?: Record<string, unknown>[] } | null)?.tools;
  if (!Array.isArray(tools)) return answer;
  for (const tool of tools) {
    if ((tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport === "forbidden") delete tool.execution;
    for (const key of ["inputSchema", "outputSchema"]) {
      const s = tool[key] as Record<string, unknown> | undefined;
      if (!s) continue;
      delete s.$schema;
      if (key !== "outputSchema") continue;
      const props = s.properties as object | undefined;
      if (props && Object.keys(props).length === 0) delete s.properties;
      const extra = s.additionalProperties;
      if (extra && typeof extra === "object" && Object.keys(extra).length === 0) delete s.additionalProperties;
    }
  }
  return answer;
}

/**
 * Wraps the SDK's `tools/list` handler of `server` with {@link compactTools}. The SDK keeps its
 * handlers in the protocol layer's `_requestHandlers` map and offers no hook on an answer; the
 * size test of `tools/list` (test/e2e/mcp-output-schema.test.ts) fails if that ever moves.
 * Call it after the tools are registered. Throws when the server has no `tools/list` handler.
 */
export function compactToolsList(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const sdk = handlers?.get("tools/list");
  if (!handlers || !sdk) throw new Error("the MCP SDK's tools/list handler was not found: register the tools first");
  handlers.set("tools/list", async (request, extra) => compactTools(await sdk(request, extra)));
}
