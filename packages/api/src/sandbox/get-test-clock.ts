import { defineRoute } from "../route.js";
import { TestClockView } from "./schemas.js";
import { renderTestClock, testClockOf } from "./test-clock.js";

/** `GET /test/clock` (docs/design/agents.md#sandbox): the sandbox's now and how far it is ahead of the wall clock. */
export const getTestClock = defineRoute({
  method: "get",
  path: "/test/clock",
  operationId: "getTestClock",
  tag: "sandbox",
  summary: "The sandbox's clock",
  description:
    "The sandbox's now and how far it runs ahead of the wall clock ([the sandbox](/docs/sandbox.md)). 404 outside a sandbox.",
  access: "none",
  ok: { status: 200, description: "the sandbox's clock", schema: TestClockView },
  codes: ["not_found"],
  async handle(_input, { testClock }) {
    return renderTestClock(testClockOf(testClock));
  },
});
