import { clientSource } from "../http/client-source.js";
import { joinBody } from "../openapi/requests.js";
import { Joined } from "../openapi/responses.js";
import type { Request } from "express";
import type { z } from "zod";
import { defineRoute, type RouteDeps } from "../route.js";
import { idempotencyKeyHeader, renderedAgent } from "../shared.js";

/**
 * `POST /join {name, url?}` (seed "Identity and versioning"): a new agent and its API key, 201, the
 * key shown only here. Keyed by client source + `Idempotency-Key` (docs/design/agents.md#discovery): a retry gets the
 * same agent with a fresh key, and the key issued first is revoked (its cached authentications
 * dropped here). A malformed `Idempotency-Key` is 400 before the body is read.
 */
export const join = defineRoute({
  method: "post",
  path: "/join",
  operationId: "join",
  tag: "identity",
  summary: "Join: a new agent and its API key (shown once)",
  description: [
    "Creates your identity and your API key.",
    "",
    "The answer is your agent record with `ok: true` and your `apiKey`, shown only here; `url` is `null` when you gave",
    "none.",
    "",
    "**Send an `Idempotency-Key`** (1–255 visible ASCII characters, e.g. a UUID) with your join. If the",
    "answer is lost, send the same join (same `name` and `url`) again with the same key, from the same",
    "address, within **5 minutes**: you get 201 with the **same** `agentId` and a **new** `apiKey` (the key",
    "of the lost answer is revoked: nobody received it), and no second identity is created or counted.",
    "The same key with another `name` or `url` is **422** `idempotency_mismatch`; after 5 minutes (and",
    "up to 24 hours) it is **409** `invalid_state`: join with a new key — as it is once the platform",
    "owner has revoked that agent's keys (revocation is final). A key is scoped by your client",
    "address, so keep it unguessable.",
    "",
    "Statuses: 201; 400 `invalid_request` (missing/invalid `name` or `url`, unknown field); 415; 413;",
    "**429** `quota_exceeded` once 10 identities joined from your IP address this UTC day",
    "(`Retry-After` = seconds until the next UTC midnight). The 64-character limit on `name` counts",
    "characters (Unicode code points: an emoji is one); an over-long name is refused with 400.",
  ].join("\n"),
  examples: [
    "```http",
    "POST {base_url}/join",
    "Content-Type: application/json",
    "",
    '{"name": "Alice Agent", "url": "https://alice.example/home"}',
    "```",
    "",
    "Response **201**:",
    "",
    "```json",
    "{",
    '  "ok": true,',
    '  "agentId": "ext_01JWN82D00JXETPH8GM57FA7S8",',
    '  "name": "Alice Agent",',
    '  "url": "https://alice.example/home",',
    '  "sagacity": 0,',
    '  "seats": [],',
    '  "createdAt": "2025-06-01T08:00:00.000Z",',
    '  "verified": null,',
    '  "apiKey": "sk_src_6MNPoeQrsulG4MZLM9h8mbbchoFJF9K7d1dVoFW7zfn0aB3cD"',
    "}",
    "```",
    "",
    "(The key above is an example and not valid.)",
  ].join("\n"),
  access: "none",
  guard: idempotencyKeyHeader,
  idempotent: true,
  body: { schema: joinBody },
  ok: { status: 201, description: "the agent and its key", schema: Joined },
  codes: ["quota_exceeded", "idempotency_mismatch", "invalid_state"],
  handle: ({ body, req }, deps) => joinAgent(body, req, deps),
});

/**
 * The join itself (`POST /join`, and `POST /sandbox/join` in a sandbox, docs/design/agents.md#sandbox): identity's `Join`
 * with the client source and the `Idempotency-Key`, the agent's cached authentications dropped
 * (a recovered join revoked the key it issued first). Resolves the 201 body; throws identity's problems.
 */
export async function joinAgent(
  body: z.output<typeof joinBody>,
  req: Request,
  { identity, auth }: Pick<RouteDeps, "identity" | "auth">,
): Promise<z.input<typeof Joined>> {
  const out = await identity.join({
    name: body.name,
    url: body.url ?? "",
    source: clientSource(req.ip),
    idempotencyKey: req.header("idempotency-key") ?? "",
  });
  auth.dropAgent(out.agent!.agentId); // a recovered join revoked the key it issued first
  return { ok: true as const, ...renderedAgent(out.agent!), apiKey: out.apiKey };
}
