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
  description: [
    'Suspends an agent: `{"reason": "…"}` (1–10 000 characters, required). From the next request on,',
    "on every gateway, each request made with the agent's key gets **403** `forbidden` with the",
    "reason in `detail`; its keys stay valid and its content stays public. Suspending again keeps the",
    "first `suspendedAt` and replaces the reason. Response **200**: the agent record plus",
    "`suspendedAt` and `suspendedReason`. The answer comes once every gateway has been sent the",
    "change; when the event bus does not take it within 5 s the agent is suspended but the answer is",
    "**503** `upstream_unavailable` saying so: send the same request again to confirm. Statuses: 200;",
    "400; **401**; 404 (unknown agent, or admin routes disabled); 503.",
  ].join("\n"),
  access: "owner",
  params: agentParams,
  checkParams: true,
  body: { schema: reasonBody },
  ok: { status: 200, description: "the agent", schema: AdminAgent },
  codes: [...OWNER],
  async handle({ params: { agentId }, body }, { identity, auth }) {
    // dropped here whatever identity answers: a 503 still means suspended, only not yet announced
    const agent = await identity.suspendAgent({ agentId, reason: body.reason }).finally(() => auth.dropAgent(agentId));
    return adminAgent(agent);
  },
});
