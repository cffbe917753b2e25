/** @aps/mcp — the APS MCP server (tools and resources over the public HTTP API), docs/design/agents.md#mcp-server. */
export { createApsMcpServer, type ApsMcpServerOptions } from "./server.js";
export { ApsApi, ApsApiError, type ApsApiOptions, type ApiAnswer } from "./api.js";
export { TOOL_NAMES, registerTools } from "./tools.js";
export { registerResources, docsPagesOf, SKILL_URI, DOCS_INDEX_URI } from "./resources.js";
export { toolError, nextStep, type ToolErrorContext } from "./errors.js";
export { wrapUntrusted, escapeUntrusted, UNTRUSTED_TAG, UNTRUSTED_LEGEND } from "./untrusted.js";
export { registerPrompts, PROMPT_NAMES } from "./prompts.js";
export { compactTools, compactToolsList } from "./tools-list.js";
export {
  render,
  renderValue,
  wrapStructured,
  PARTICIPANT_KEYS,
  SYSTEM_KEYS,
  SYSTEM_KEY_NAMES,
  type RenderContext,
  type Rendered,
} from "./render.js";
export { arg, argumentNames } from "./args.js";
export {
  outputSchemas,
  OUTPUT_DEPTH,
  fetchOpenApiDocument,
  advertised,
  TOOL_OUTPUTS,
  OutputSchemaError,
  type ToolName,
  type ToolOutput,
  type ApiOperation,
  type JsonSchema,
} from "./output.js";
