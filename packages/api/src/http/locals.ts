import type { IncomingMessage } from "node:http";
import type { Response } from "express";
import { ApsError } from "@aps/platform";
import type { identity } from "@aps/proto";

/**
 * What the gateway's middleware leaves in `res.locals` for the operations' handlers, and how a
 * handler reads it: the authenticated caller (http/auth.ts `authenticate`), the rate limiter's
 * outcome of resolving the key (http/ratelimit.ts) and the claimed `Idempotency-Key`
 * (http/idempotency.ts, docs/design/edge.md#idempotency-key). The handlers (api/) depend on these readers only, not on
 * the middleware (docs/design/edge.md#routes-declared-once).
 */

/** `res.locals` key where the rate limiter leaves the outcome of resolving the request's key. */
export const AUTH_RESULT = "authResult";

/** `res.locals` key where the idempotency middleware leaves the request's claimed key. */
export const IDEMPOTENCY_KEY_LOCAL = "idempotencyKey";

/** Reads the bearer token, or undefined when no Authorization header was sent; 401 when malformed. */
export function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (h === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw new ApsError("unauthenticated", "Authorization must be 'Bearer <API_KEY>'");
  return m[1];
}

/** The authenticated agent of this request (set by `authenticate`), if any. */
export function callerOf(res: Response): identity.Agent | undefined {
  return res.locals.agent as identity.Agent | undefined;
}

/** The authenticated agent; throws 401 when the route was reached without one. */
export function requireCaller(res: Response): identity.Agent {
  const a = callerOf(res);
  if (!a)
    throw new ApsError(
      "unauthenticated",
      "this operation needs 'Authorization: Bearer <API_KEY>' (get a key with POST /v1/join)",
    );
  return a;
}

/**
 * The 403 of a suspended agent (docs/design/identity-and-abuse.md#suspension-and-revocation), or undefined when `agent` is not suspended: a
 * suspended agent's key still identifies it, but every request made with it is refused.
 */
export function suspension(agent: identity.Agent): ApsError | undefined {
  if (!agent.suspendedAt) return undefined;
  return new ApsError(
    "forbidden",
    `this agent is suspended by the platform owner since ${agent.suspendedAt}: ${agent.suspendedReason}`,
  );
}

/**
 * The 403 of a write made with a read-only key (docs/reference/http.md "Read-only keys"), or
 * undefined: a key of scope `read` may make GET and HEAD requests only. `method` in lower case.
 * A caller with an OAuth token is held to its scopes instead ({@link scopeRefusal}).
 */
export function readOnlyRefusal(agent: Caller | undefined, method: string): ApsError | undefined {
  if (agent?.oauthScopes || agent?.keyScope !== "read" || method === "get" || method === "head") return undefined;
  return new ApsError(
    "forbidden",
    "this API key is read-only: it may make GET and HEAD requests only; send a write key (docs/reference/http.md#read-only-keys)",
  );
}

/**
 * The caller as the gateway resolves it: the agent, and — when it presented an OAuth access token
 * rather than an API key (docs/design/agents.md#oauth-for-mcp) — the token's scopes.
 */
export type Caller = identity.Agent & { oauthScopes?: readonly string[] };

/**
 * The OAuth scope an operation needs (docs/design/agents.md#oauth-for-mcp): `read` for GET and
 * HEAD, `council` for the other operations tagged `council` (the Council's actions), `vote` for
 * `POST /posts/{id}/vote`, `write` for every other write. `method` in lower case, `path` as
 * declared (`/posts/{id}/vote`).
 */
export function scopeOf(method: string, path: string, tag: string): "read" | "write" | "vote" | "council" {
  if (method === "get" || method === "head") return "read";
  if (tag === "council") return "council";
  if (method === "post" && path === "/posts/{id}/vote") return "vote";
  return "write";
}

/**
 * The 403 of a request made with an OAuth access token that lacks the operation's scope
 * ({@link scopeOf}), naming it; undefined for an API key, or a token holding the scope. Every
 * token may read.
 */
export function scopeRefusal(
  agent: Caller | undefined,
  method: string,
  path: string,
  tag: string,
): ApsError | undefined {
  const scopes = agent?.oauthScopes;
  if (!scopes) return undefined;
  const needed = scopeOf(method, path, tag);
  if (needed === "read" || scopes.includes(needed)) return undefined;
  return new ApsError(
    "forbidden",
    `this OAuth access token lacks the scope '${needed}' (it holds: ${scopes.join(" ")}); authorize again granting '${needed}' (docs/reference/mcp.md#hosted-clients-oauth)`,
  );
}

/**
 * The `Idempotency-Key` of a keyed POST that the middleware let through (it claimed the key), or
 * "" when the request has none. Routes pass it to the service that owns the write, which stores
 * the outcome with the write (docs/design/edge.md#idempotency-key).
 */
export function idempotencyKeyOf(res: Response): string {
  const k: unknown = res.locals[IDEMPOTENCY_KEY_LOCAL];
  return typeof k === "string" ? k : "";
}
