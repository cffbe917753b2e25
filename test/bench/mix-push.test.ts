import {
  coresOf,
  killVerdict,
  lagsBetween,
  lagSummary,
  missedCount,
  shareRatio,
  slowCount,
  startReceivers,
} from "./lib/mix-push.mjs";

/**
 * The push and fault arithmetic of `npm run bench:mix` (test/bench/lib/mix-push.mjs, docs/design/tests.md#mixed-load-bench),
 * checked against figures worked out by hand from the capacity model's figures — and the
 * local webhook receivers against a delivery posted to them.
 */
describe("bench:mix push and kill", () => {
  it("5 % slow webhooks: 10 → 1, 50 → 3 (2.5 rounded up), 20 → 1 (exactly 1), none at 0 %", () => {
    expect(slowCount(10, 0.05)).toBe(1);
    expect(slowCount(50, 0.05)).toBe(3);
    expect(slowCount(20, 0.05)).toBe(1); // 20 × 0.05 = 1.0000000000000002 in binary: still 1
    expect(slowCount(100, 0.05)).toBe(5);
    expect(slowCount(10, 0)).toBe(0);
    expect(slowCount(0, 0.05)).toBe(0);
    expect(slowCount(2, 1)).toBe(2);
  });

  it("missed events: expected keys not received, duplicates of the feed counted per key", () => {
    const got = new Set(["e1 post.created", "e2 vote.cast"]);
    expect(missedCount(["e1 post.created", "e2 vote.cast", "e2 post.milestone", "e3 comment.created"], got)).toBe(2);
    expect(missedCount([], got)).toBe(0);
    expect(missedCount(["e1 post.created"], new Set())).toBe(1);
  });

  it("lag summary is nearest-rank over 1..200 ms: p50 100, p95 190, p99 198, max 200; empty → nulls", () => {
    const ms = Array.from({ length: 200 }, (_, i) => 200 - i); // any order
    expect(lagSummary(ms)).toEqual({ n: 200, p50: 100, p95: 190, p99: 198, max: 200 });
    expect(lagSummary([])).toEqual({ n: 0, p50: null, p95: null, p99: null, max: null });
  });

  it("replica spread is min/max: 37 vs 39 → 0.949 (within ±25 %), 30 vs 45 → 0.667 (not); one count → null", () => {
    expect(shareRatio([37, 39])).toBeCloseTo(0.9487, 4);
    expect(shareRatio([45, 30])).toBeCloseTo(0.6667, 4);
    expect(shareRatio([40, null])).toBeNull();
    expect(shareRatio([0, 0])).toBeNull();
  });

  it("a kill holds when only unkeyed writes in flight at it failed; any read or later write failure is beyond", () => {
    expect(killVerdict({ failedReads: 0, failedWritesInFlight: 2, failedWritesAfter: 0, inFlightWrites: 3 })).toEqual({
      held: true,
      beyond: 0,
    });
    expect(killVerdict({ failedReads: 1, failedWritesInFlight: 0, failedWritesAfter: 0, inFlightWrites: 3 })).toEqual({
      held: false,
      beyond: 1,
    });
    expect(killVerdict({ failedReads: 0, failedWritesInFlight: 1, failedWritesAfter: 2, inFlightWrites: 5 })).toEqual({
      held: false,
      beyond: 2,
    });
  });

  it("lags of a window: the events that occurred in [from, to), the end excluded", () => {
    const r = { lags: [10, 20, 30, 40], occurred: [1000, 2000, 3000, 4000] };
    expect(lagsBetween(r, 2000, 4000)).toEqual([20, 30]);
    expect(lagsBetween(r, 0, 999)).toEqual([]);
  });

  it("cores are CPU ms over wall ms: 500 ms of CPU in 10 s is 0.05 of a core", () => {
    expect(coresOf(500, 10_000)).toBeCloseTo(0.05, 10);
    expect(coresOf(5, 0)).toBe(0);
  });

  it("a receiver (in its own thread) records one lag per event (once per webhook-id) and answers 204; a slow one answers late", async () => {
    const { receivers, sync, close } = await startReceivers(2, { slow: 1, slowMs: 300 });
    try {
      const [slow, fast] = receivers as [(typeof receivers)[0], (typeof receivers)[0]];
      expect(slow.slow).toBe(true);
      expect(fast.slow).toBe(false);
      const t0 = Date.now();
      const body = JSON.stringify({
        type: "post.created",
        timestamp: new Date(t0 - 1500).toISOString(),
        eventId: "01EV",
        cursor: "c1",
        data: {},
      });
      const post = (url: string, id: string) =>
        fetch(url, { method: "POST", headers: { "webhook-id": id, "content-type": "application/json" }, body });
      expect((await post(fast.url, "msg_1")).status).toBe(204);
      expect((await post(fast.url, "msg_1")).status).toBe(204); // a retry of the same delivery
      await sync();
      expect(fast.deliveries).toBe(2);
      expect([...fast.keys]).toEqual(["01EV post.created"]);
      expect(fast.lags).toHaveLength(1);
      expect(fast.lags[0]).toBeGreaterThanOrEqual(1500);
      expect(fast.lags[0]).toBeLessThanOrEqual(1500 + (Date.now() - t0));
      const s0 = Date.now();
      expect((await post(slow.url, "msg_2")).status).toBe(204);
      expect(Date.now() - s0).toBeGreaterThanOrEqual(290);
      await sync();
      expect(slow.keys.size).toBe(1);
    } finally {
      await close();
    }
  });
});
