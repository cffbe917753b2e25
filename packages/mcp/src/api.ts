import { randomUUID } from "node:crypto";
import { inToolDryRun } from "./dry-run.js";

/** How the MCP tools reach APS: the public HTTP API under `/v1` (docs/design/agents.md#mcp-server). */
export interface ApsApiOptions {
  /** `http(s)://host[:port]/v1` — the API every tool calls. */
  baseUrl: string;
  /** The agent's API key, sent as `Authorization: Bearer <key>`; absent = anonymous calls. */
  apiKey?: string | undefined;
  /** The fetch to use (tests, instrumentation); default the global fetch. */
  fetch?: typeof fetch;
  /** Extra headers sent with every call (the gateway's `/mcp` forwards the caller's address and request id). */
  headers?: Record<string, string>;
}

/** A successful answer of the API. */
export interface ApiAnswer<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** A refused call: the RFC 9457 problem the gateway answered, or a network failure (`status` 0). */
export class ApsApiError extends Error {
  constructor(
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** The problem's stable `code` (`unreachable` for a network failure). */
    readonly code: string,
    /** The problem's `detail`, for humans. */
    readonly detail: string,
    /** Seconds from `Retry-After`, when the answer carried one. */
    readonly retryAfter: number | undefined,
    /** The answer's `X-Request-Id`. */
    readonly requestId: string | undefined,
  ) {
    super(`${code} (HTTP ${status}): ${detail}`);
  }
}

/** A client of the public APS API with the agent's key; a non-2xx answer throws {@link ApsApiError}. */
export class ApsApi {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly opts: ApsApiOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.fetchFn = opts.fetch ?? fetch;
  }

  /** The server root (the base URL without `/v1`), where `/docs` lives. */
  get origin(): string {
    return this.base.replace(/\/v1$/, "");
  }

  /** Whether an API key was given. */
  get hasKey(): boolean {
    return Boolean(this.opts.apiKey);
  }

  /** `GET path` under the base URL with query parameters (undefined ones left out). */
  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<ApiAnswer<T>> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return this.call<T>("GET", `${this.base}${path}${qs ? `?${qs}` : ""}`);
  }

  /** `POST path` with a JSON body and an `Idempotency-Key` (the caller's, or a new UUID). */
  post<T>(path: string, body: unknown, idempotencyKey: string = randomUUID()): Promise<ApiAnswer<T>> {
    return this.call<T>("POST", `${this.base}${path}`, body, idempotencyKey);
  }

  /** `PUT path` with a JSON body and an `Idempotency-Key` (a replacement: a retry writes the same). */
  put<T>(path: string, body: unknown, idempotencyKey: string = randomUUID()): Promise<ApiAnswer<T>> {
    return this.call<T>("PUT", `${this.base}${path}`, body, idempotencyKey);
  }

  /**
   * `PATCH path` with a JSON body (edits: an edit that changes nothing adds no revision, so a retry
   * is harmless); `revision` set: `If-Match: "<revision>"`, the edit applies only to that revision
   * (docs/reference/editing.md; 412 `precondition_failed` otherwise).
   */
  patch<T>(path: string, body: unknown, revision?: number): Promise<ApiAnswer<T>> {
    return this.call<T>("PATCH", `${this.base}${path}`, body, undefined, revision);
  }

  /** `DELETE path` (a deletion: a retry finds it gone, 404). */
  del<T>(path: string): Promise<ApiAnswer<T>> {
    return this.call<T>("DELETE", `${this.base}${path}`);
  }

  /** `GET` of a text document at an absolute URL or a path under the server root (`/docs/…`). */
  async text(url: string): Promise<string> {
    const r = await this.call<string>("GET", url.startsWith("/") ? `${this.origin}${url}` : url, undefined, undefined);
    return r.body;
  }

  private async call<T>(
    method: string,
    url: string,
    body?: unknown,
    idempotencyKey?: string,
    revision?: number,
  ): Promise<ApiAnswer<T>> {
    const headers: Record<string, string> = { accept: "application/json, text/*", ...(this.opts.headers ?? {}) };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
    if (revision !== undefined) headers["if-match"] = `"${revision}"`;
    // a tool call that asked for a dry run sends its writes as dry runs (dry-run.ts)
    if (method !== "GET" && inToolDryRun()) url = `${url}${url.includes("?") ? "&" : "?"}dryRun=true`;
    let res: Response;
    try {
      res = await this.fetchFn(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new ApsApiError(0, "unreachable", `could not reach ${url}: ${why}`, undefined, undefined);
    }
    const text = await res.text();
    const type = res.headers.get("content-type") ?? "";
    // JSON and problem+json are parsed; NDJSON (`application/x-ndjson`, GET /me/export) stays text
    const parsed: unknown = /^application\/(?:[\w.-]+\+)?json\b/i.test(type) && text ? JSON.parse(text) : text;
    if (!res.ok) {
      const p = (typeof parsed === "object" && parsed !== null ? parsed : {}) as { code?: unknown; detail?: unknown };
      const retry = Number(res.headers.get("retry-after"));
      throw new ApsApiError(
        res.status,
        typeof p.code === "string" ? p.code : `http_${res.status}`,
        typeof p.detail === "string" ? p.detail : text.slice(0, 200),
        Number.isFinite(retry) && res.headers.has("retry-after") ? retry : undefined,
        res.headers.get("x-request-id") ?? undefined,
      );
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
}
