import { registerApsOrigin } from "./contract-fetch.js";

/** One HTTP answer as a test sees it. */
export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Options of one request. */
export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** Called with every answer the client receives (e.g. `ContractValidator.check`). */
export type ResponseObserver = (method: string, path: string, res: HttpResult) => unknown;

/** One request of an {@link httpClient}: `req("POST", "/posts", { key, body })`. */
export type HttpRequest = <T = any>(method: string, path: string, opts?: RequestOptions) => Promise<HttpResult<T>>;

/**
 * A tiny HTTP client for tests against a running gateway at `baseUrl` (…/v1). JSON bodies are
 * parsed when the response is JSON or problem+json. `onResponse` sees every answer. The origin is
 * registered with the contract check (contract-fetch.ts), so every request and answer is also
 * validated against the OpenAPI document when the check is installed. The client carries its
 * `baseUrl`, so it can stand for its API wherever one is asked for (the fixtures of test/support).
 */
export function httpClient(baseUrl: string, onResponse?: ResponseObserver): HttpRequest & { readonly baseUrl: string } {
  // Every answer of a test client is an APS answer: the contract check validates it (docs/design/edge.md#contract-checks).
  registerApsOrigin(baseUrl);
  const request = async function request<T = any>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    const ct = res.headers.get("content-type") ?? "";
    const parsed = /json/.test(ct) && text ? JSON.parse(text) : text;
    const out: HttpResult<T> = { status: res.status, headers: res.headers, body: parsed as T, text };
    onResponse?.(method, path, out);
    return out;
  };
  return Object.assign(request, { baseUrl });
}
