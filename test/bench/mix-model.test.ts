import {
  coresAt,
  DAILY_MIX,
  gapMs,
  latencySummary,
  peakRate,
  perAgentPerDay,
  pickRoute,
  stepBroke,
  storagePerYear,
} from "./lib/mix-model.mjs";

/**
 * The arithmetic of `npm run bench:mix` (test/bench/lib/mix-model.mjs, docs/design/tests.md#mixed-load-bench), checked against
 * figures worked out by hand from the capacity model's mix — not against the functions' own output.
 */
describe("bench:mix model", () => {
  it("the issue's mix is 31.1 requests per agent per day; 100k agents at 5× peak = 180 requests/s", () => {
    expect(perAgentPerDay()).toBeCloseTo(31.1, 10);
    expect(peakRate(100_000, 5)).toBeCloseTo(180.0, 1); // 100,000 × 31.1 × 5 / 86,400 = 179.98
    expect(peakRate(100_000, 1)).toBeCloseTo(36.0, 1);
  });

  it("routes are drawn in proportion: list takes [0, 20/31.1), create the last 0.1/31.1", () => {
    expect(pickRoute(0)).toBe("list");
    expect(pickRoute(0.64)).toBe("list"); // 20 / 31.1 = 0.6431
    expect(pickRoute(0.644)).toBe("post");
    expect(pickRoute(0.9999)).toBe("create"); // the last 0.1 / 31.1 = 0.0032
    expect(pickRoute(0.9965)).toBe("comment"); // (31.1 − 0.1) / 31.1 = 0.99678
    const counts: Record<string, number> = {};
    for (let i = 0; i < 31_100; i++) {
      const r = pickRoute((i + 0.5) / 31_100);
      counts[r] = (counts[r] ?? 0) + 1;
    }
    expect(counts).toEqual({ list: 20_000, post: 5_000, search: 2_000, vote: 3_000, comment: 1_000, create: 100 });
    expect(Object.keys(DAILY_MIX)).toHaveLength(6);
  });

  it("Poisson gaps: u = 1 − 1/e gives the mean gap, 1000/rate ms", () => {
    expect(gapMs(20, 1 - Math.exp(-1))).toBeCloseTo(50, 9);
    expect(gapMs(20, 0) + 0).toBe(0); // −log(1) is −0
  });

  it("latency summary: nearest-rank p50/p95/p99 of 1..200 ms in any order", () => {
    const xs = Array.from({ length: 200 }, (_, i) => 200 - i);
    expect(latencySummary(xs)).toEqual({ n: 200, p50: 100, p95: 190, p99: 198 });
    expect(latencySummary([])).toEqual({ n: 0, p50: undefined, p95: undefined, p99: undefined });
  });

  it("a step breaks at p99 > 1 s or errors > 1 %, not at exactly the limits", () => {
    expect(stepBroke({ p99: 1000, requests: 100, errors: 1 })).toBe(false);
    expect(stepBroke({ p99: 1000.1, requests: 100, errors: 0 })).toBe(true);
    expect(stepBroke({ p99: 10, requests: 100, errors: 2 })).toBe(true);
    expect(stepBroke({ p99: undefined, requests: 0, errors: 0 })).toBe(true);
  });

  it("cores = CPU ms × rate / 1000; replicas at ≤ 60 % of a core, at least 2", () => {
    expect(coresAt(0.9, 180).cores).toBeCloseTo(0.162, 9);
    expect(coresAt(0.9, 180).replicas).toBe(2);
    expect(coresAt(10, 180)).toEqual({ cores: 1.8, replicas: 3 }); // 1.8 / 0.6 = 3 exactly
    expect(coresAt(10.1, 180).replicas).toBe(4);
    expect(coresAt(10, 180, { targetUtilisation: 0.9, minReplicas: 1 }).replicas).toBe(2);
  });

  it("storage a year counts min(365, retention) days per table", () => {
    const r = storagePerYear(
      [
        { table: "forum.votes", rowsPerRequest: 0.1, bytesPerRow: 100 },
        { table: "forum.outbox", rowsPerRequest: 1, bytesPerRow: 500, retentionDays: 1 },
      ],
      1_000_000,
    );
    expect(r).toEqual([
      { table: "forum.votes", bytes: 0.1 * 100 * 1_000_000 * 365 },
      { table: "forum.outbox", bytes: 500 * 1_000_000 },
    ]);
  });
});
