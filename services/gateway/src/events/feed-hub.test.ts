import type { notifications } from "@aps/proto";
import { waitUntil } from "@aps/testkit";
import { FeedHub, readInterval, type FeedSource, type HubEvent } from "./feed-hub.js";

/** An in-memory feed: `seq` 1…n, every call counted. */
function feed() {
  const f = {
    rows: [] as notifications.FeedEvent[],
    calls: [] as notifications.ListEventsRequest[],
    fail: false,
    add(n: number, type = "post.created") {
      for (let i = 0; i < n; i++) {
        const cursor = String(f.rows.length + 1);
        f.rows.push({ cursor, eventId: `e${cursor}`, type, occurredAt: "2026-01-01T00:00:00.000Z", dataJson: "{}" });
      }
    },
    async listEvents(req: notifications.ListEventsRequest): Promise<notifications.ListEventsResponse> {
      f.calls.push(req);
      if (f.fail) throw new Error("down");
      const after = Number(req.after || "0");
      const items = f.rows
        .filter((r) => Number(r.cursor) > after && (req.types.length === 0 || req.types.includes(r.type)))
        .slice(0, req.limit);
      return { items, nextCursor: items.at(-1)?.cursor ?? (req.after || "0"), head: String(f.rows.length) };
    },
  };
  return f satisfies FeedSource;
}

const render = (e: notifications.FeedEvent) => `id: ${e.cursor}\n\n`;
const seqs = (events: readonly HubEvent[]) => events.map((e) => Number(e.seq));

/** The shared feed reader (docs/design/events.md#event-stream-sse). */
describe("FeedHub", () => {
  it("hands a read's events to many listeners over several turns of the event loop, each once, in order", async () => {
    const f = feed();
    const hub = new FeedHub(f, render, { pollMs: 10 });
    hub.acquire();
    await hub.fresh();
    const n = 450;
    const got: number[][] = Array.from({ length: n }, () => []);
    /** How many listeners had been called when an immediate queued by the first one ran. */
    let calledWhenOtherWorkRan: number | undefined;
    let called = 0;
    got.forEach((g, i) =>
      hub.join(0n, (events) => {
        if (events.length === 0) return;
        called++;
        g.push(...seqs(events));
        if (i === 0) setImmediate(() => (calledWhenOtherWorkRan ??= called));
      }),
    );
    f.add(3);
    await waitUntil("every listener's three events", () => got.every((g) => g.length === 3), { timeoutMs: 10_000 });
    expect(got.every((g) => g.join() === "1,2,3")).toBe(true);
    // other work ran between the first listener and the last: the fan-out did not hold the loop
    expect(calledWhenOtherWorkRan).toBeGreaterThan(0);
    expect(calledWhenOtherWorkRan).toBeLessThan(n);
    hub.release();
  });

  it("reads less often when its live streams would take more than streamWritesPerS writes a second", async () => {
    expect([readInterval(0, 500, 2_000), readInterval(1_000, 500, 2_000), readInterval(2_000, 500, 2_000)]).toEqual([
      500, 500, 1_000,
    ]);
    const f = feed();
    const at: number[] = [];
    const timed: FeedSource = {
      listEvents: (req) => (at.push(performance.now()), f.listEvents(req)),
    };
    // 4 streams at 100 writes/s: a read every 40 ms, not every 5
    const hub = new FeedHub(timed, render, { pollMs: 5, streamWritesPerS: 100 });
    hub.acquire();
    await hub.fresh();
    for (let i = 0; i < 4; i++) hub.join(0n, () => undefined);
    const from = at.length;
    await waitUntil("five more reads", () => at.length >= from + 5, { timeoutMs: 10_000 });
    hub.release();
    const gaps = at.slice(from).map((t, i, a) => (i === 0 ? Infinity : t - a[i - 1]!));
    // a timer does not fire before its time (bar a millisecond of rounding): 36, not 40
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(36);
  });

  it("starts at the feed's head and fans each new event out to every live listener with one read", async () => {
    const f = feed();
    f.add(5);
    const hub = new FeedHub(f, render, { pollMs: 10 });
    hub.acquire();
    expect(await hub.fresh()).toBe(5n);
    const got: number[][] = Array.from({ length: 50 }, () => []);
    // the reads made so far when each listener got its events
    const readsAt: number[] = [];
    for (const g of got)
      expect(
        hub.join(5n, (events) => {
          g.push(...seqs(events));
          readsAt.push(f.calls.length);
        })?.replay,
      ).toEqual([]);
    const before = f.calls.length;
    f.add(2);
    await waitUntil("every listener's two events", () => got.every((g) => g.length === 2), { timeoutMs: 10_000 });
    expect(got.every((g) => g.join() === "6,7")).toBe(true);
    // 50 listeners, still one reader: the first read after the events came handed them to all 50
    // (a read answers what the feed holds when it is made: one made before f.add found nothing)
    expect(readsAt).toEqual(Array.from({ length: 50 }, () => before + 1));
    expect(f.calls.every((c) => c.types.length === 0)).toBe(true);
    hub.release();
  });

  it("reads again at once after a full page, and renders each event once for all listeners", async () => {
    const f = feed();
    const hub = new FeedHub(f, render, { pollMs: 1_000, pageSize: 10 });
    hub.acquire();
    await hub.fresh();
    const got: HubEvent[] = [];
    const other: HubEvent[] = [];
    hub.join(0n, (events) => got.push(...events));
    hub.join(0n, (events) => other.push(...events));
    f.add(35);
    await hub.fresh();
    await waitUntil("the 35 events", () => got.length === 35, { timeoutMs: 10_000 });
    expect(seqs(got)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
    expect(got[0]).toBe(other[0]);
    expect(got[0]!.frame).toBe("id: 1\n\n");
    hub.release();
  });

  it("lets a stream join only while its ring covers the stream's position, replaying what it missed", async () => {
    const f = feed();
    f.add(3);
    const hub = new FeedHub(f, render, { pollMs: 5, ringEvents: 4 });
    hub.acquire();
    await hub.fresh(); // head 3, floor 3
    expect(hub.join(2n, () => undefined)).toBeUndefined();
    f.add(6); // 4…9; the ring keeps 6…9 (floor 5)
    await waitUntil("the hub to read up to 9", () => hub.head === 9n, { timeoutMs: 10_000 });
    expect(hub.join(4n, () => undefined)).toBeUndefined();
    const joined = hub.join(6n, () => undefined)!;
    expect([seqs(joined.replay), joined.head]).toEqual([[7, 8, 9], 9n]);
    hub.release();
  });

  it("stops reading when the last stream leaves, and starts again at the then head", async () => {
    const f = feed();
    const hub = new FeedHub(f, render, { pollMs: 5 });
    hub.acquire();
    await hub.fresh();
    const calls = f.calls.length;
    hub.release();
    // the position is forgotten only as the read loop ends (its last step): no read is left to come
    await waitUntil("the read loop to end", () => hub.head === undefined, { timeoutMs: 10_000 });
    expect(f.calls.length).toBe(calls);
    f.add(500);
    hub.acquire();
    expect(await hub.fresh()).toBe(500n);
    // it started again with one read of the head, and did not read the 500 events it did not need
    const since = f.calls.slice(calls);
    expect(since[0]).toEqual({ after: "", types: [], limit: 1 });
    expect(since.slice(1).every((c) => c.after === "500")).toBe(true);
    hub.release();
  });

  it("rejects fresh() while the feed is down and keeps trying", async () => {
    const f = feed();
    f.fail = true;
    const hub = new FeedHub(f, render, { pollMs: 5 });
    hub.acquire();
    await expect(hub.fresh()).rejects.toThrow("down");
    f.fail = false;
    f.add(1);
    expect(await hub.fresh()).toBe(1n);
    hub.release();
  });
});
