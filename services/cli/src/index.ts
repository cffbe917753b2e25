/** @aps/cli — admin and import commands over the public HTTP API. */
export { api, ApiError } from "./api.js";
export { importPeps, readPeps, pepToPost, type Pep, type ImportResult } from "./import-peps.js";
export { loadMcpConfig, mcpCommand, DEFAULT_APS_URL, type McpConfig } from "./mcp.js";
