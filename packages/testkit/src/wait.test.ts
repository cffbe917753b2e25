import { pause, seededRandom, testSeed, timeScale, waitUntil } from "./wait.js";

describe("testSeed(label, env)", () => {
  it("replays APS_TEST_SEED, picks a random seed without it, and prints the replay line either way", () => {
    const printed: unknown[] = [];
    const original = console.log;
    console.log = (line: unknown) => void printed.push(line);
    try {
      expect(testSeed("t", { APS_TEST_SEED: "1234" })).toBe(1234);
      expect(printed.at(-1)).toBe("[t] seed 1234 (replay: APS_TEST_SEED=1234)");
      const s = testSeed("t", {});
      expect(Number.isInteger(s) && s >= 0 && s < 2 ** 32).toBe(true);
      expect(printed.at(-1)).toBe(`[t] seed ${s} (replay: APS_TEST_SEED=${s})`);
      // the same seed, the same sequence
      const [a, b] = [seededRandom(s), seededRandom(s)];
      expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    } finally {
      console.log = original;
    }
  });

  it.each(["-1", "1.5", "abc", "4294967296"])("refuses APS_TEST_SEED=%j", (v) => {
    expect(() => testSeed("t", { APS_TEST_SEED: v })).toThrow(/APS_TEST_SEED/);
  });
});

describe("timeScale(env) and waitUntil", () => {
  it("reads TEST_TIME_SCALE: 1 by default, a number ≥ 1, or auto (the load per core, 1…10)", () => {
    expect(timeScale({})).toBe(1);
    expect(timeScale({ TEST_TIME_SCALE: "2.5" })).toBe(2.5);
    const auto = timeScale({ TEST_TIME_SCALE: "auto" });
    expect(auto).toBeGreaterThanOrEqual(1);
    expect(auto).toBeLessThanOrEqual(10);
  });

  it.each(["0.5", "0", "fast", "-3"])("refuses TEST_TIME_SCALE=%j", (v) => {
    expect(() => timeScale({ TEST_TIME_SCALE: v })).toThrow(/TEST_TIME_SCALE/);
  });

  it("resolves with the condition's first truthy value, looking again until it comes", async () => {
    let looks = 0;
    const got = await waitUntil("the third look", () => (++looks >= 3 ? { looks } : undefined), { intervalMs: 1 });
    expect(got).toEqual({ looks: 3 });
  });

  it("fails after the deadline, naming what it waited for and the condition's last error", async () => {
    await expect(
      waitUntil(
        "a condition that never holds",
        () => {
          throw new Error("still 0 rows");
        },
        { timeoutMs: 20, intervalMs: 5 },
      ),
    ).rejects.toThrow(/timed out after \d+ ms waiting for a condition that never holds: still 0 rows/);
  });

  it("pause(ms, why) refuses to pause without a reason", () => {
    expect(() => pause(1, "")).toThrow(/say why/);
  });
});
