import { agentParams, emptyBody } from "../openapi/requests.js";
import { RevokedKeys } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { OWNER } from "./owner.js";

/**
 * `POST /admin/agents/{agentId}/keys/revoke` (docs/design/identity-and-abuse.md#suspension-and-revocation): revokes every valid key of the agent
 * now; 404 for an unknown agent. Every gateway drops the agent's cached authentications on
 * `identity.access_changed`; this one at once.
 */
export const revokeKeys = defineRoute({
  method: "post",
  path: "/admin/agents/{agentId}/keys/revoke",
  operationId: "revokeKeys",
  tag: "admin",
  summary: "Revoke every key of an agent",
  description: [
    "Revokes every valid key of the agent at once (a leaked key, an abusive agent). Send no body or",
    "`{}`. Those keys then get the same 401 as an unknown key, on every gateway; the agent, its seats,",
    'Sagacity and content remain. Response **200** `{"agentId": "…", "revoked": n}` (0 when it had no',
    "valid key: idempotent). As for a suspension, the answer comes once every gateway has been sent",
    "the change, or is **503** `upstream_unavailable` (revoked, not yet announced: send it again).",
    "Statuses as in [`POST /admin/agents/{agentId}/suspend`](/docs/endpoints.md#post-adminagentsagentidsuspend).",
  ].join("\n"),
  access: "owner",
  params: agentParams,
  checkParams: true,
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "how many keys were revoked", schema: RevokedKeys },
  codes: [...OWNER],
  async handle({ params: { agentId } }, { identity, auth }) {
    // dropped here whatever identity answers: a 503 still means revoked, only not yet announced
    const out = await identity.revokeKeys({ agentId }).finally(() => auth.dropAgent(agentId));
    return { agentId: out.agentId, revoked: out.revoked };
  },
});
