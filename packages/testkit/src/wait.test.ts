import { seededRandom, testSeed } from "./wait.js";

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
