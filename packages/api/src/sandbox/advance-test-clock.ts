import { defineRoute } from "../route.js";
import { advanceBody, TestClockView } from "./schemas.js";
import { testClockOf } from "./test-clock.js";

/**
 * `POST /test/clock/advance {seconds}` (docs/design/agents.md#sandbox): moves the sandbox's clock forward for every
 * service of the sandbox — Council deadlines, last calls and review dates come due at the next
 * pass of the deadline scheduler (COUNCIL_TICK_MS). Any sandbox agent may; the clock never goes back.
 */
export const advanceTestClock = defineRoute({
  method: "post",
  path: "/test/clock/advance",
  operationId: "advanceTestClock",
  tag: "sandbox",
  summary: "Move the sandbox's clock forward",
  description: [
    'Moves the sandbox\'s clock forward by `seconds` (1 to 34 560 000, 400 days): `{"seconds": 86400}`. Every',
    "sandbox service reads the moved clock: Council deadlines, last calls and review dates that it passes come",
    "due within a few seconds (the Council's scheduler pass), with their events and webhooks. The clock is the",
    "whole sandbox's and never goes back. Answers the new `{now, offsetSeconds}`. Needs an `sk_test_` key.",
    "",
    "Statuses: 200; 400; 401; 404 outside a sandbox.",
  ].join("\n"),
  access: "key",
  body: { schema: advanceBody },
  ok: { status: 200, description: "the sandbox's clock, moved", schema: TestClockView },
  codes: ["unauthenticated", "not_found"],
  async handle({ body }, { testClock }) {
    const moved = await testClockOf(testClock).advance(body.seconds * 1000);
    return { now: moved.now.toISOString(), offsetSeconds: moved.offsetMs / 1000 };
  },
});
