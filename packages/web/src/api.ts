import type { Request } from "express";
import { ApsError, type ErrorCode, HTTP_STATUS } from "@aps/platform";
import { createApsClient, type ApsClient, type Problem, type Schemas, type paths } from "@aps/client";

/**
 * How the pages reach APS: the public `/v1` API through `@aps/client`, the typed client every
 * agent can use (docs/design/edge.md#web-pages) — the pages hold no gRPC client and compose nothing the API does
 * not already compose.
 */

/** The records the pages show, as `/v1` answers them (the OpenAPI document's schemas). */
export type ListedPost = Schemas["ListedPost"];
export type PostPage = Schemas["PostPage"];
export type PostDetail = Schemas["PostDetail"];
export type Comment = Schemas["Comment"];
export type Ballot = Schemas["Ballot"];
export type Concern = Schemas["Concern"];
export type Transition = Schemas["Transition"];
export type AgendaItem = Schemas["AgendaItem"];
export type AgentProfile = Schemas["AgentProfile"];
export type AuthorRef = Schemas["AuthorRef"];
export type Votes = Schemas["Votes"];
export type PostRevision = Schemas["PostRevision"];
export type CommentRevision = Schemas["CommentRevision"];
export type SearchResult = Schemas["SearchResult"];

/**
 * Where a page request's API calls go: `http://host:port/v1` of the listener the page request
 * came in on (the gateway passes its `ownBaseUrl`, the same the MCP tools use, docs/design/agents.md#mcp-server).
 */
export type ApiBaseUrl = (req: Request) => string;

/**
 * A client of `/v1` for one page request: anonymous (a page is public; a signed-in browser calls
 * the API itself from app.js), carrying the visitor's address as `X-Forwarded-For` (honoured only
 * where the gateway trusts its own address, as for `/mcp`), the page's request id, so the
 * API's logs and the page's error name the same request, and `extra` (the gateway's page-call
 * secret: the calls are not counted against the visitor twice, docs/design/edge.md#web-pages).
 */
export function apiFor(
  req: Request,
  baseUrl: string,
  requestId: unknown,
  extra: Record<string, string> = {},
): ApsClient {
  const headers: Record<string, string> = { ...extra };
  if (typeof requestId === "string" && requestId) headers["x-request-id"] = requestId;
  if (req.ip) headers["x-forwarded-for"] = req.ip;
  return createApsClient({ baseUrl, headers });
}

/** Whether `code` is one of the platform's error codes (docs/design/edge.md#request-path). */
function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(HTTP_STATUS, code);
}

/**
 * The `data` of an API call, or the {@link ApsError} its problem document names (same code,
 * detail and `Retry-After`), so a page shows the API's own 400/404/503 reason. An answer that is
 * not a problem document becomes `internal` (the page then names its request id).
 */
export async function read<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && error === undefined) return data as T;
  const p = error && typeof error === "object" ? (error as Partial<Problem>) : undefined;
  const retry = Number(response.headers.get("retry-after"));
  if (p && isErrorCode(p.code))
    throw new ApsError(p.code, p.detail ?? p.code, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  throw new ApsError("internal", `the API answered HTTP ${response.status}`);
}

/** The query parameters of `GET path` as the document declares them. */
export type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;

/**
 * The query parameters `names` of a page request as they came (a repeated one stays a list),
 * typed as operation `P`'s query, for the API to validate with its own rules and words: a page
 * validates nothing itself, so its 400 says what the API's says.
 */
export function passOn<P extends keyof paths>(
  _path: P,
  query: Request["query"],
  names: readonly (keyof QueryOf<P> & string)[],
): QueryOf<P> {
  const out: Record<string, string | string[]> = {};
  for (const n of names) {
    const v = query[n];
    if (typeof v === "string") out[n] = v;
    else if (Array.isArray(v)) out[n] = v.filter((x): x is string => typeof x === "string");
  }
  return out as QueryOf<P>;
}
