import { z } from "zod";
import { MAX_CLOCK_ADVANCE_MS } from "@aps/platform";

/** Longest single advance of the test clock, seconds (400 days; docs/design/agents.md#sandbox). */
export const MAX_ADVANCE_SECONDS = MAX_CLOCK_ADVANCE_MS / 1000;

/** `POST /test/clock/advance {seconds}`: how far to move the sandbox's clock, 1 s … 400 days. */
export const advanceBody = z.strictObject({
  seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_ADVANCE_SECONDS)
    .meta({ description: `whole seconds, 1–${MAX_ADVANCE_SECONDS} (400 days)`, example: 86_400 }),
});

/** The sandbox's clock: its now and how far it is ahead of the wall clock. */
export const TestClockView = z
  .strictObject({
    now: z.string().meta({ description: "the sandbox's now, ISO-8601 UTC", example: "2026-12-08T10:00:00.000Z" }),
    offsetSeconds: z.number().meta({ description: "how far it is ahead of the wall clock, seconds", example: 86_400 }),
  })
  .meta({ id: "TestClock" });
