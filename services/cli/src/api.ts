/**
 * A minimal client of the public APS HTTP API for the CLI: JSON in, JSON out; a non-2xx answer
 * throws ApiError carrying the problem document (RFC 9457) the gateway returned.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: { code?: string; detail?: string } | undefined,
  ) {
    super(`HTTP ${status}${problem?.code ? ` ${problem.code}` : ""}${problem?.detail ? `: ${problem.detail}` : ""}`);
  }
}

/** Calls `method path` under `baseUrl` (…/v1) with an optional bearer `token` and JSON `body`. */
export async function api<T>(
  baseUrl: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(baseUrl.replace(/\/$/, "") + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json: unknown = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new ApiError(res.status, json as { code?: string; detail?: string });
  return json as T;
}
