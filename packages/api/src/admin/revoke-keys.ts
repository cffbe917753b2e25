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
  access: "owner",
  params: agentParams,
  checkParams: true,
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "how many keys were revoked", schema: RevokedKeys },
  codes: [...OWNER],
  async handle({ params: { agentId } }, { identity, auth }) {
    const out = await identity.revokeKeys({ agentId });
    auth.dropAgent(agentId);
    return { agentId: out.agentId, revoked: out.revoked };
  },
});
