import { percentile } from "./lib/stats.mjs";

/**
 * The bench's percentile (test/bench/lib/stats.mjs) is the nearest-rank one (rank ⌈p·n⌉), checked
 * against values worked out by hand — not against the function's own output.
 */
describe("bench percentile (nearest rank)", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it("p99 of 1..100 is 99 (the 99th smallest), not the maximum", () => {
    expect(percentile(hundred, 0.99)).toBe(99);
    expect(percentile(hundred, 1)).toBe(100);
  });

  it("p50 of an even count is the lower middle sample; of an odd count the middle one", () => {
    expect(percentile([10, 20, 30, 40], 0.5)).toBe(20);
    expect(percentile([10, 20, 30], 0.5)).toBe(20);
  });

  it("small p gives the first sample; binary fractions do not shift the rank (0.29 × 100 = 29)", () => {
    expect(percentile(hundred, 0.01)).toBe(1);
    expect(percentile(hundred, 0.29)).toBe(29);
    expect(percentile([7], 0.99)).toBe(7);
  });

  it("no samples: undefined; p outside (0, 1]: an error", () => {
    expect(percentile([], 0.5)).toBeUndefined();
    expect(() => percentile(hundred, 0)).toThrow(RangeError);
    expect(() => percentile(hundred, 99)).toThrow(RangeError);
  });
});
