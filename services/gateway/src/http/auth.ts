import type { RequestHandler } from "express";
import { ApsError } from "@aps/platform";
import type { identity } from "@aps/proto";
import type { KeyResolver } from "../cache/auth-cache.js";
import { AUTH_RESULT, bearer, suspension } from "@aps/api/http/locals";

/**
 * Resolves `Authorization: Bearer <key>` into `res.locals.agent` through `identityClient` (the
 * gateway's authentication cache in front of the identity service, docs/design/edge.md#authentication-cache).
 * With `required`, a missing key is a 401; a key that is sent but unknown or revoked is a 401
 * on every route (the same answer for both, seed "Authentication", docs/design/edge.md#request-path).
 * A suspended agent's key gets 403 `forbidden` with the owner's reason (docs/design/identity-and-abuse.md#suspension-and-revocation).
 */
export function authenticate(identityClient: KeyResolver, required: boolean): RequestHandler {
  return (req, res, next) => {
    if (res.locals.agent) {
      next(); // resolved for an earlier route this request passed through (GET /skill.md?lang=)
      return;
    }
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
