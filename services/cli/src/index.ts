/** @aps/cli — admin and import commands over the public HTTP API. */
export { apsClient, ApiError, unwrap } from "./api.js";
export { importPeps, readPeps, pepToPost, type Pep, type ImportResult } from "./import-peps.js";
export { loadMcpConfig, mcpCommand, DEFAULT_APS_URL, type McpConfig } from "./mcp.js";
