import { ApsError, type TestClock } from "@aps/platform";
import type { z } from "zod";
import type { TestClockView } from "./schemas.js";

/** The sandbox's test clock, or 404 `not_found` outside a sandbox (docs/design/agents.md#sandbox). */
export function testClockOf(clock: TestClock | undefined): TestClock {
  if (!clock)
    throw new ApsError(
      "not_found",
      "this deployment runs no sandbox: /v1/sandbox/… and /v1/test/… answer only where the operator runs one (GET /v1 lists links.sandbox then)",
    );
  return clock;
}

/** The clock as `/test/clock` answers it (schemas.ts `TestClockView`). */
export function renderTestClock(clock: TestClock): z.input<typeof TestClockView> {
  return { now: clock.now().toISOString(), offsetSeconds: clock.offsetMs() / 1000 };
}
