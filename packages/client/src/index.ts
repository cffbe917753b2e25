/**
 * @aps/client — the typed client of the APS `/v1` HTTP API (docs/design/agents.md#typed-client). The types are
 * generated from the gateway's OpenAPI 3.1 document (src/gen/openapi.ts, openapi-typescript);
 * requests go through openapi-fetch, so a path, parameter, body or answer that the document does
 * not describe is a type error in the caller.
 */
export * from "./client.js";
export * from "./errors.js";
export type { paths, components, operations } from "./gen/openapi.js";
