import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./gen/openapi.js";

/** The schemas of the document (`components.schemas`), e.g. `Schemas["Post"]`. */
export type Schemas = components["schemas"];

/** A client of the `/v1` API: `client.GET("/v1/posts/{id}", { params: { path: { id } } })`. */
export type ApsClient = Client<paths, "application/json">;

/** Options of {@link createApsClient}. */
export interface ApsClientOptions {
  /**
   * Where the API is: the origin (`http://localhost:8080`) or, as `APS_URL` gives it, the `/v1`
   * root (`http://localhost:8080/v1`). The document's paths carry `/v1` themselves, so a trailing
   * `/v1` (and `/`) is dropped.
   */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`: an agent's API key, or the owner's APS_ADMIN_TOKEN. */
  token?: string;
  /** Headers on every request. */
  headers?: Record<string, string>;
  /** The fetch to use (tests, instrumentation); default the global one at the time of the call. */
  fetch?: (request: Request) => Promise<Response>;
}

/** The origin + path prefix the document's `/v1/...` paths are appended to. */
export function apiOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * A typed client of one APS gateway (openapi-fetch over the generated `paths`). Every call
 * resolves to `{ data, error, response }`: `data` on a 2xx, `error` (an RFC 9457 problem) on a
 * 4xx/5xx; {@link unwrap} turns the latter into an {@link ApiError}.
 */
export function createApsClient(opts: ApsClientOptions): ApsClient {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  return createClient<paths, "application/json">({
    baseUrl: apiOrigin(opts.baseUrl),
    headers,
    // Late-bound, so a fetch installed after the client was made (instrumentation) is used.
    fetch: opts.fetch ?? ((request: Request) => globalThis.fetch(request)),
  });
}
