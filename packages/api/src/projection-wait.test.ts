import { caseProjectionWaits, createLogger } from "@aps/platform";
import { scaled } from "@aps/testkit";
import { awaitCaseProjection } from "./projection-wait.js";

/**
 * The council writes' wait for the forum's projection (docs/design/council.md#the-forums-projection-of-the-case): reached as soon as the
 * forum's revision is the write's, answered anyway after the budget (late) or when the forum does
 * not answer (failed), each counted in aps_case_projection_waits_total. The forum here is a
 * revision that moves after a number of looks (the real path is test/e2e/post-read.test.ts).
 */
const log = createLogger("projection-wait-test", "silent");
const count = async (result: string) =>
  (await caseProjectionWaits.get()).values.find((v) => v.labels.result === result)?.value ?? 0;

describe("awaitCaseProjection", () => {
  it("answers once the projection reaches the revision, looking again with back-off", async () => {
    let looks = 0;
    // the projection lands between the 5th and the 6th look
    const forum = { getCaseRevision: async () => ({ revision: ++looks > 5 ? 3 : 1 }) };
    const before = await count("reached");
    const t = Date.now();
    expect(await awaitCaseProjection(forum, "p_1", 3, log)).toBe("reached");
    const took = Date.now() - t;
    // it looked until the revision was there, and answered at that look
    expect(looks).toBe(6);
    // back-off, not a busy loop: the 5 pauses between the looks are 3 + 5 + 8 + 12 + 16 = 44 ms
    // (slack for the timers' clock: a busy loop takes about 0 ms)
    expect(took).toBeGreaterThanOrEqual(35);
    expect(took).toBeLessThan(scaled(1_000));
    expect(await count("reached")).toBe(before + 1);
    expect(await awaitCaseProjection(forum, "p_1", 2, log)).toBe("reached"); // newer counts too
  });

  it("answers anyway after the budget (late) or when the forum fails (failed), counted", async () => {
    const [late, failed] = [await count("late"), await count("failed")];
    const t = Date.now();
    expect(await awaitCaseProjection({ getCaseRevision: async () => ({ revision: 1 }) }, "p_2", 2, log, 150)).toBe(
      "late",
    );
    expect(Date.now() - t).toBeGreaterThanOrEqual(145);
    expect(Date.now() - t).toBeLessThan(scaled(1_000));
    const down = {
      getCaseRevision: async (): Promise<{ revision: number }> => {
        throw new Error("unavailable");
      },
    };
    expect(await awaitCaseProjection(down, "p_2", 2, log)).toBe("failed");
    expect([await count("late"), await count("failed")]).toEqual([late + 1, failed + 1]);
  });
});
