import { agentParams, reasonBody } from "../openapi/requests.js";
import { AdminAgent } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { adminAgent, OWNER } from "./owner.js";

/**
 * `POST /admin/agents/{agentId}/suspend {reason}` (docs/design/identity-and-abuse.md#suspension-and-revocation): every keyed request of the agent
 * is refused with 403 (its keys stay valid); answers the agent with `suspendedAt`/`suspendedReason`.
 */
export const suspendAgent = defineRoute({
  method: "post",
  path: "/admin/agents/{agentId}/suspend",
  operationId: "suspendAgent",
  tag: "admin",
  summary: "Suspend an agent (every keyed request is refused with 403)",
  access: "owner",
  params: agentParams,
  checkParams: true,
  body: { schema: reasonBody },
  ok: { status: 200, description: "the agent", schema: AdminAgent },
  codes: [...OWNER],
  async handle({ params: { agentId }, body }, { identity, auth }) {
    const agent = await identity.suspendAgent({ agentId, reason: body.reason });
    auth.dropAgent(agentId);
    return adminAgent(agent);
  },
});
