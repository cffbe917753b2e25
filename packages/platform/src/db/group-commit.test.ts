import { GroupCommit } from "./group-commit.js";

/**
 * The group-commit queue of votes (docs/design/votes-and-heat.md#group-commits-in-the-forum), on its own: which items travel together, that
 * one batch at most is in flight, the size cap, and that a failing batch fails only the items
 * that fail alone.
 */
interface Probe {
  batches: number[][];
  singles: number[];
  inFlight: number;
  maxInFlight: number;
}

/** A few event-loop turns: how long a stand-in write takes unless the test holds it. */
async function turns(n = 3): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/**
 * A GroupCommit over stand-in writes that record what they were given. A write takes a few
 * event-loop turns, or, with `write`, until the promise it returns for its items settles.
 */
function setup(
  o: { maxBatch?: number; failBatch?: boolean; bad?: Set<number>; write?: (items: number[]) => Promise<void> } = {},
) {
  const probe: Probe = { batches: [], singles: [], inFlight: 0, maxInFlight: 0 };
  const enter = () => {
    probe.inFlight++;
    probe.maxInFlight = Math.max(probe.maxInFlight, probe.inFlight);
  };
  const wait = (items: number[]) => (o.write ? o.write(items) : turns());
  const gc = new GroupCommit<number, string>(
    async (items) => {
      enter();
      probe.batches.push([...items]);
      await wait(items);
      probe.inFlight--;
      if (o.failBatch || items.some((i) => o.bad?.has(i))) throw new Error("batch failed");
      return items.map((i) => `b${i}`);
    },
    async (item) => {
      enter();
      probe.singles.push(item);
      await wait([item]);
      probe.inFlight--;
      if (o.bad?.has(item)) throw new Error(`item ${item} failed`);
      return `s${item}`;
    },
    o.maxBatch ?? 64,
  );
  return { gc, probe };
}

describe("GroupCommit (vote group commit, docs/design/votes-and-heat.md#group-commits-in-the-forum)", () => {
  it("writes items submitted in the same event-loop turn as one batch, in submission order", async () => {
    const { gc, probe } = setup();
    const results = await Promise.all([1, 2, 3, 4].map((i) => gc.submit(i)));
    expect(results).toEqual(["b1", "b2", "b3", "b4"]);
    expect(probe.batches).toEqual([[1, 2, 3, 4]]);
    expect(probe.singles).toEqual([]);
  });

  it("writes a lone item alone, and gathers what arrives meanwhile into the next batch; never two writes at once", async () => {
    // item 1's write lasts until the test ends it; the others take a few turns
    let endFirstWrite!: () => void;
    const firstWrite = new Promise<void>((r) => (endFirstWrite = r));
    const { gc, probe } = setup({ write: (items) => (items[0] === 1 ? firstWrite : turns()) });
    const first = gc.submit(1);
    await new Promise((r) => setImmediate(r)); // item 1 is being written now
    expect(probe.singles).toEqual([1]);
    const more = [2, 3, 4, 5].map((i) => gc.submit(i));
    expect(gc.waiting).toBe(4);
    // however long item 1's write takes, nothing else is written meanwhile
    await turns(10);
    expect(probe.batches).toEqual([]);
    expect(gc.waiting).toBe(4);
    endFirstWrite();
    expect(await Promise.all([first, ...more])).toEqual(["s1", "b2", "b3", "b4", "b5"]);
    expect(probe.singles).toEqual([1]);
    expect(probe.batches).toEqual([[2, 3, 4, 5]]);
    expect(probe.maxInFlight).toBe(1);
  });

  it("caps a batch at maxBatch items and writes the rest next", async () => {
    const { gc, probe } = setup({ maxBatch: 3 });
    const results = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => gc.submit(i)));
    expect(results).toEqual(["b1", "b2", "b3", "b4", "b5", "b6", "s7"]);
    expect(probe.batches).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(probe.singles).toEqual([7]);
    expect(probe.maxInFlight).toBe(1);
  });

  it("after a failed batch writes each item alone: only the failing item's caller gets an error", async () => {
    const { gc, probe } = setup({ bad: new Set([3]) });
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => gc.submit(i)));
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual([
      "s1",
      "s2",
      "item 3 failed",
      "s4",
    ]);
    expect(probe.batches).toEqual([[1, 2, 3, 4]]);
    expect([...probe.singles].sort()).toEqual([1, 2, 3, 4]);
  });

  it("keeps serving after a failure", async () => {
    const { gc } = setup({ failBatch: true });
    expect(await Promise.all([1, 2].map((i) => gc.submit(i)))).toEqual(["s1", "s2"]);
    expect(await gc.submit(9)).toBe("s9");
  });

  it("refuses a maxBatch below 1", () => {
    expect(
      () =>
        new GroupCommit<number, number>(
          async (x) => x,
          async (x) => x,
          0,
        ),
    ).toThrow(RangeError);
  });
});
