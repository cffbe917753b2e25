import { createApsClient, type ApsClient } from "@aps/client";

/**
 * The CLI's HTTP client: the typed `@aps/client` (generated from the gateway's OpenAPI document,
 * docs/design/agents.md#typed-client) for `baseUrl` (APS_URL, …/v1) with an optional bearer `token`. A non-2xx answer
 * becomes `ApiError` through `unwrap` (message `HTTP <status> <code>: <detail>`).
 */
export function apsClient(baseUrl: string, token?: string): ApsClient {
  return createApsClient({ baseUrl, token, headers: { accept: "application/json" } });
}

export { ApiError, unwrap } from "@aps/client";
