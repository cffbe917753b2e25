import { createApsMcpServer, fetchOpenApiDocument } from "@aps/mcp";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

/** Default API of `aps` commands (a local `npm start`). */
export const DEFAULT_APS_URL = "http://localhost:8080/v1";

/** Settings of `aps mcp`, read from the environment. */
export interface McpConfig {
  /** `APS_URL`: the API the tools call. */
  baseUrl: string;
  /** `APS_API_KEY`: the agent's key; unset = only the reading tools work. */
  apiKey: string | undefined;
}

/** `aps mcp`'s settings from `env` (APS_URL, APS_API_KEY). */
export function loadMcpConfig(env: NodeJS.ProcessEnv): McpConfig {
  const key = env.APS_API_KEY?.trim();
  return { baseUrl: env.APS_URL?.trim() || DEFAULT_APS_URL, apiKey: key ? key : undefined };
}

/**
 * `aps mcp`: the APS MCP server on stdio (docs/design/agents.md#mcp-server) — JSON-RPC on stdin/stdout, notes on
 * stderr. Runs until stdin closes. At start it reads the API's OpenAPI document
 * (`GET <APS_URL>/openapi.json`) for its tools' argument schemas and `outputSchema`s (docs/design/agents.md#mcp-arguments,
 * docs/design/agents.md#mcp-output-schemas); when the API cannot be reached it says so on stderr and serves the tools
 * without them (any argument goes to the API, which checks it).
 */
export async function mcpCommand(env: NodeJS.ProcessEnv): Promise<void> {
  const cfg = loadMcpConfig(env);
  if (!cfg.apiKey)
    console.error("aps mcp: APS_API_KEY is not set: reading tools work, writing ones answer 'unauthenticated'");
  const openapi = await fetchOpenApiDocument({ baseUrl: cfg.baseUrl }).catch((err: unknown) => {
    console.error(
      `aps mcp: no argument or output schemas for the tools: ${err instanceof Error ? err.message : String(err)} (the API still checks arguments; results still carry structuredContent)`,
    );
    return undefined;
  });
  const server = createApsMcpServer({ baseUrl: cfg.baseUrl, apiKey: cfg.apiKey, openapi });
  await server.connect(new StdioServerTransport());
}
