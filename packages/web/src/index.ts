/**
 * @aps/web — the server-rendered web pages for people (docs/design/edge.md#web-pages), a library the gateway
 * mounts as express routers. The pages read every record through `@aps/client` against the
 * gateway's own `/v1` API, like the MCP tools do (docs/design/edge.md#web-pages); they hold no gRPC client.
 */
export { webRoutes, PAGE_CSP, type WebDeps } from "./routes.js";
export { apiReferenceRoutes, API_REFERENCE_CSP, API_REFERENCE_PATH } from "./api-reference.js";
export { loadAssets, ASSETS_DIR, type Assets, type Asset } from "./assets.js";
export type { DocsIndex } from "./pages/docs.js";
export type { ApiBaseUrl } from "./api.js";
