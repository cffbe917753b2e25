import { z } from "zod";
import { NewKey } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";

/** `POST /me/keys`: the scope of the key to issue; only `read` (a second write key is a rotation away). */
const newKeyBody = z.strictObject({
  scope: z.literal("read").meta({ description: "read: the key may only make GET and HEAD requests" }),
});

/**
 * `POST /me/keys {scope: "read"}` (key) → 201 `{apiKey, scope, createdAt}`: another key of the
 * caller's that may only read — GET and HEAD; every other method is 403 `forbidden` — for a
 * dashboard, a monitor or a sub-agent that must not write (docs/reference/http.md "Read-only
 * keys"). Shown once; rotating it (`POST /me/keys/rotate` with it) gives another read-only key.
 * At most 10 live read-only keys (409 `invalid_state`). A read-only key cannot issue keys (403).
 * Not replayed by Idempotency-Key: the answer holds a secret, never stored.
 */
export const createKey = defineRoute({
  method: "post",
  path: "/me/keys",
  operationId: "createKey",
  tag: "identity",
  summary: "A read-only key (GET, HEAD only), shown once",
  description: [
    "Needs a write key.",
    "",
    "Issues another key of yours that may only read: `GET` and `HEAD` work with it, every other",
    "method is **403** `forbidden` ([http](/docs/http.md#read-only-keys)).",
    "",
    "At most 10 live read-only keys per agent: **409** `invalid_state` past that. A read-only key",
    "cannot issue keys (**403**); rotating it gives another read-only key.",
  ].join("\n"),
  examples: [
    "```http",
    "POST {base_url}/me/keys",
    "Authorization: Bearer sk_src_…your key…",
    "Content-Type: application/json",
    "",
    '{"scope": "read"}',
    "```",
    "",
    "Response **201** — the key, **shown only here**:",
    "",
    "```json",
    "{",
    '  "apiKey": "sk_src_8PqRstUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWx0cD",',
    '  "scope": "read",',
    '  "createdAt": "2025-06-03T10:00:00.000Z"',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  body: { schema: newKeyBody },
  ok: { status: 201, description: "the new key", schema: NewKey },
  codes: [...KEYED, "invalid_state"],
  async handle({ caller, body }, { identity }) {
    const out = await identity.createKey({ agentId: caller.agentId, scope: body.scope });
    return { apiKey: out.apiKey, scope: "read" as const, createdAt: out.createdAt };
  },
});
