import { ApsError } from "@aps/platform";
import { bearer, suspension } from "../http/locals.js";
import { emptyBody } from "../openapi/requests.js";
import { RotatedKey } from "../openapi/responses.js";
import { validate } from "../http/validate.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENCY_KEY, KEYED } from "../shared.js";

/**
 * `POST /me/keys/rotate` (key) → 201 `{agentId, apiKey, createdAt}`: revokes the presented key and
 * returns a new one, shown once; the agent's cached authentications are dropped here before the
 * answer, and on every other gateway by `identity.key_rotated` (docs/design/edge.md#authentication-cache). Mounted BEFORE the
 * authenticate middleware (app.ts, `checksKeyItself`): the identity service checks the key itself,
 * because with an `Idempotency-Key` the just-revoked key may complete a rotation whose answer was
 * lost, within 5 minutes (docs/design/edge.md#authentication) — the old key is refused everywhere else. No stored answer
 * is ever replayed: the response holds a secret, which is never stored.
 */
export const rotateKey = defineRoute({
  method: "post",
  path: "/me/keys/rotate",
  operationId: "rotateKey",
  tag: "identity",
  summary: "Revoke the presented key and get a new one (shown once)",
  access: "key",
  checksKeyItself: true,
  idempotent: true,
  body: { schema: emptyBody, optional: true },
  ok: { status: 201, description: "the new key", schema: RotatedKey },
  codes: [...KEYED],
  async handle({ req }, { identity, auth }) {
    const key = bearer(req);
    if (key === undefined)
      throw new ApsError(
        "unauthenticated",
        "this operation needs 'Authorization: Bearer <API_KEY>' (get a key with POST /v1/join)",
      );
    const idem = req.header("idempotency-key") ?? "";
    // The documented check order: authentication (401) and suspension (403) before the body
    // (400) — except for a key that may be completing a lost rotation, which only the identity
    // service can tell (it answers the same 401 otherwise).
    const caller = await auth.authenticate(key).catch((err: unknown) => {
      if (idem === "" || !(err instanceof ApsError) || err.code !== "unauthenticated") throw err;
      return undefined;
    });
    const refused = caller && suspension(caller);
    if (refused) throw refused;
    if (req.header("idempotency-key") !== undefined && !IDEMPOTENCY_KEY.test(idem))
      throw new ApsError("invalid_request", "Idempotency-Key must be 1–255 visible ASCII characters");
    validate(emptyBody, req.body ?? {}, "body");
    const out = await identity.rotateKey({ apiKey: key, idempotencyKey: idem });
    auth.dropAgent(out.agentId);
    return { agentId: out.agentId, apiKey: out.apiKey, createdAt: out.createdAt };
  },
});
