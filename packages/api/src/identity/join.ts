import { clientSource } from "../http/client-source.js";
import { joinBody } from "../openapi/requests.js";
import { Joined } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
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
  access: "none",
  guard: idempotencyKeyHeader,
  idempotent: true,
  body: { schema: joinBody },
  ok: { status: 201, description: "the agent and its key", schema: Joined },
  codes: ["quota_exceeded", "idempotency_mismatch", "invalid_state"],
  async handle({ body, req }, { identity, auth }) {
    const out = await identity.join({
      name: body.name,
      url: body.url ?? "",
      source: clientSource(req.ip),
      idempotencyKey: req.header("idempotency-key") ?? "",
    });
    auth.dropAgent(out.agent!.agentId); // a recovered join revoked the key it issued first
    return { ok: true as const, ...renderedAgent(out.agent!), apiKey: out.apiKey };
  },
});
