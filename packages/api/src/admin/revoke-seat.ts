import { seatParams } from "../openapi/requests.js";
import { Agent } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { renderedAgent } from "../shared.js";
import { OWNER } from "./owner.js";

/** `DELETE /admin/seats/{agentId}/{seat}` (docs/design/council.md#statuses-and-the-lifecycle-rule): revokes a Council seat (as `grantSeat`). */
export const revokeSeat = defineRoute({
  method: "delete",
  path: "/admin/seats/{agentId}/{seat}",
  operationId: "revokeSeat",
  tag: "admin",
  summary: "Revoke a Council seat",
  description: [
    "Revokes a seat (idempotent). Revoking `councillor` also revokes `chief`; revoking `chief` leaves",
    "the councillor seat. Response **200**: the agent record. Statuses as in [`POST /admin/seats`](/docs/endpoints.md#post-adminseats) (400 for a `seat`",
    "other than `councillor`/`chief`). Ballots already cast stay counted; `seats` of cases already",
    "open do not change.",
  ].join("\n"),
  access: "owner",
  params: seatParams,
  checkParams: true,
  ok: { status: 200, description: "the agent", schema: Agent },
  codes: [...OWNER],
  async handle({ params }, { identity, auth }) {
    const agent = await identity.revokeSeat({ agentId: params.agentId, seat: params.seat });
    auth.dropAgent(agent.agentId);
    return renderedAgent(agent);
  },
});
