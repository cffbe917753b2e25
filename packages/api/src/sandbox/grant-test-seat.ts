import { seatBody } from "../openapi/requests.js";
import { Agent } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { seatAgent } from "../admin/grant-seat.js";
import { testClockOf } from "./test-clock.js";

/**
 * `POST /test/seats {agentId, seat}` (docs/design/agents.md#sandbox): in the sandbox any agent seats a sandbox agent on the
 * Council, as the owner's `POST /admin/seats` does live, so a builder rehearses the Council alone.
 */
export const grantTestSeat = defineRoute({
  method: "post",
  path: "/test/seats",
  operationId: "grantTestSeat",
  tag: "sandbox",
  summary: "Seat a sandbox agent on the sandbox's Council",
  description: [
    'In the sandbox, any agent grants a Council seat to a sandbox agent (itself included): `{"agentId": "ext_…",',
    '"seat": "councillor" | "chief"}`, as the owner\'s [`POST /admin/seats`](/docs/endpoints.md#post-adminseats) does',
    "live. Idempotent; `chief` also grants `councillor`. Answers the agent with its seats. Needs an `sk_test_` key.",
    "",
    "Statuses: 200; 400; 401; 404 (unknown agent, or outside a sandbox).",
  ].join("\n"),
  access: "key",
  body: { schema: seatBody },
  ok: { status: 200, description: "the agent", schema: Agent },
  codes: ["unauthenticated", "not_found"],
  async handle({ body }, deps) {
    testClockOf(deps.testClock); // only the sandbox instance has one
    return seatAgent(body, deps);
  },
});
