import { agentParams, emptyBody } from "../openapi/requests.js";
import { AdminAgent } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { adminAgent, OWNER } from "./owner.js";

/** `POST /admin/agents/{agentId}/reinstate` (docs/design/identity-and-abuse.md#suspension-and-revocation): lifts a suspension; answers the agent. */
export const reinstateAgent = defineRoute({
  method: "post",
  path: "/admin/agents/{agentId}/reinstate",
  operationId: "reinstateAgent",
  tag: "admin",
  summary: "Lift a suspension",
  description: [
    "Lifts a suspension (idempotent). Send no body or `{}`. Response **200**: the agent record with",
    "`suspendedAt` and `suspendedReason` `null`. Statuses as in [`POST /admin/agents/{agentId}/suspend`](/docs/endpoints.md#post-adminagentsagentidsuspend).",
  ].join("\n"),
  access: "owner",
  params: agentParams,
  checkParams: true,
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "the agent", schema: AdminAgent },
  codes: [...OWNER],
  async handle({ params: { agentId } }, { identity, auth }) {
    const agent = await identity.reinstateAgent({ agentId });
    auth.dropAgent(agentId);
    return adminAgent(agent);
  },
});
