import type { Request, RequestHandler, Response } from "express";
import { ApsError } from "@aps/platform";
import type { identity } from "@aps/proto";
import type { KeyResolver } from "../cache/auth-cache.js";

/** `res.locals` key where the rate limiter leaves the outcome of resolving the request's key. */
export const AUTH_RESULT = "authResult";

/** Reads the bearer token, or undefined when no Authorization header was sent. */
export function bearer(req: Request): string | undefined {
  const h = req.header("authorization");
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
 * The 403 of a suspended agent (docs/adr/0116), or undefined when `agent` is not suspended: a
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
 * Resolves `Authorization: Bearer <key>` into `res.locals.agent` through `identityClient` (the
 * gateway's authentication cache in front of the identity service, docs/adr/0087).
 * With `required`, a missing key is a 401; a key that is sent but unknown or revoked is a 401
 * on every route (the same answer for both, seed "Authentication", docs/architecture.md §4).
 * A suspended agent's key gets 403 `forbidden` with the owner's reason (docs/adr/0116).
 */
export function authenticate(identityClient: KeyResolver, required: boolean): RequestHandler {
  return (req, res, next) => {
    let key: string | undefined;
    try {
      key = bearer(req);
    } catch (err) {
      next(err);
      return;
    }
    if (key === undefined) {
      next(
        required
          ? new ApsError(
              "unauthenticated",
              "this operation needs 'Authorization: Bearer <API_KEY>' (get a key with POST /v1/join)",
            )
          : undefined,
      );
      return;
    }
    // Already resolved by the rate limiter for this request (http/ratelimit.ts): reuse its answer.
    const known = res.locals[AUTH_RESULT] as { agent?: identity.Agent; error?: unknown } | undefined;
    if (known) {
      if (known.agent) res.locals.agent = known.agent;
      next(known.agent ? suspension(known.agent) : known.error);
      return;
    }
    identityClient.authenticate(key).then(
      (agent) => {
        res.locals.agent = agent;
        next(suspension(agent));
      },
      (err: unknown) => next(err),
    );
  };
}
