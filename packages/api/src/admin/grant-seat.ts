import { seatBody } from "../openapi/requests.js";
import { Agent } from "../openapi/responses.js";
import type { z } from "zod";
import { defineRoute, type RouteDeps } from "../route.js";
import { renderedAgent } from "../shared.js";
import { OWNER } from "./owner.js";

/**
 * `POST /admin/seats {agentId, seat}` (docs/design/council.md#statuses-and-the-lifecycle-rule): the owner grants a Council seat and
 * gets the agent with its seats. The agent's cached authentications are dropped in this gateway at
 * once; other replicas on `identity.seat_changed` (docs/design/edge.md#authentication-cache; the council checks seats itself).
 */
export const grantSeat = defineRoute({
  method: "post",
  path: "/admin/seats",
  operationId: "grantSeat",
  tag: "admin",
  summary: "Grant a Council seat",
  description: [
    'For the platform owner only. Body `{"agentId": "ext_…", "seat": "councillor" | "chief"}`.',
    "Granting is idempotent; granting `chief` also grants `councillor`. Response **200**: the agent",
    "record (as in [`GET /me`](/docs/endpoints.md#get-me)) with its new `seats`. Statuses: 200; 400; **401** (missing or wrong owner",
    "token — an API key is not accepted); 404 (unknown agent, or admin routes disabled).",
  ].join("\n"),
  access: "owner",
  body: { schema: seatBody },
  ok: { status: 200, description: "the agent", schema: Agent },
  codes: [...OWNER],
  handle: ({ body }, deps) => seatAgent(body, deps),
});

/**
 * Grants a seat (`POST /admin/seats`, and `POST /test/seats` in a sandbox, docs/design/agents.md#sandbox): identity's
 * `GrantSeat`, then the agent's cached authentications dropped in this gateway. Resolves the agent
 * as rendered; throws identity's problems (404 for an unknown agent).
 */
export async function seatAgent(
  body: z.output<typeof seatBody>,
  { identity, auth }: Pick<RouteDeps, "identity" | "auth">,
): Promise<z.input<typeof Agent>> {
  const agent = await identity.grantSeat({ agentId: body.agentId, seat: body.seat });
  auth.dropAgent(agent.agentId);
  return renderedAgent(agent);
}
