import { seededRandom, testSeed } from "@aps/testkit";
import { CHECK_MIN_MS, nextCheck, nextCheckDelayMs } from "./next-check.js";

const MIN = 60_000;
const now = new Date("2026-11-26T12:00:00.000Z");
const at = (minutes: number) => new Date(now.getTime() + minutes * MIN);

describe("the check-in rule (docs/reference/heartbeat.md, docs/design/agents.md)", () => {
  it("waits 60 minutes ±20 %: the bounds of the draw, and the middle", () => {
    expect(nextCheckDelayMs(now, undefined, () => 0)).toBe(48 * MIN);
    expect(nextCheckDelayMs(now, undefined, () => 0.5)).toBe(60 * MIN);
    expect(nextCheckDelayMs(now, undefined, () => 0.999999)).toBeCloseTo(72 * MIN, -2);
  });

  it("spreads agents over the whole window, never aligned (seeded draws)", () => {
    const random = seededRandom(testSeed("next-check"));
    const waits = Array.from({ length: 2000 }, () => nextCheckDelayMs(now, undefined, random));
    for (const w of waits) {
      expect(w).toBeGreaterThanOrEqual(48 * MIN);
      expect(w).toBeLessThanOrEqual(72 * MIN);
    }
    // both ends of the window are reached: the draw is not collapsed onto one value
    expect(Math.min(...waits)).toBeLessThan(50 * MIN);
    expect(Math.max(...waits)).toBeGreaterThan(70 * MIN);
  });

  it("checks sooner near a ballot deadline: half the time left, jittered ±20 %", () => {
    // 40 minutes left: 20 min × [0.8, 1.2] = 16–24 min, sooner than 48–72
    expect(nextCheckDelayMs(now, at(40), () => 0)).toBe(16 * MIN);
    expect(nextCheckDelayMs(now, at(40), () => 0.5)).toBe(20 * MIN);
    const random = seededRandom(testSeed("next-check-deadline"));
    for (let i = 0; i < 500; i++) {
      const w = nextCheckDelayMs(now, at(40), random);
      expect(w).toBeGreaterThanOrEqual(16 * MIN);
      expect(w).toBeLessThanOrEqual(24 * MIN);
      expect(w).toBeLessThan(40 * MIN); // still before the deadline
    }
  });

  it("a far deadline changes nothing: the default period is sooner", () => {
    // 7 days left: half is 3.5 days, the hour wins
    expect(nextCheckDelayMs(now, at(7 * 24 * 60), () => 0.5)).toBe(60 * MIN);
  });

  it("never under 5 minutes, also when the deadline is about to pass or has passed", () => {
    expect(nextCheckDelayMs(now, at(6), () => 0)).toBe(CHECK_MIN_MS); // 3 min × 0.8 → 5 min
    expect(nextCheckDelayMs(now, at(0), () => 0.5)).toBe(CHECK_MIN_MS);
    expect(nextCheckDelayMs(now, at(-30), () => 0.9)).toBe(CHECK_MIN_MS);
  });

  it("answers the time in UTC ISO 8601 and the header in whole seconds", () => {
    const n = nextCheck(now, undefined, () => 0.5);
    expect(n).toEqual({ nextCheckAt: "2026-11-26T13:00:00.000Z", pollIntervalSeconds: 3600 });
    const s = nextCheck(now, at(40), () => 0.25); // 20 × 0.9 = 18 min
    expect(s).toEqual({ nextCheckAt: "2026-11-26T12:18:00.000Z", pollIntervalSeconds: 1080 });
  });
});
