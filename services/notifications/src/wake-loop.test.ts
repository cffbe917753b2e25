import { createLogger } from "@aps/platform";
import { waitUntil } from "@aps/testkit";
import { WakeLoop } from "./wake-loop.js";

const log = createLogger("wake-loop-test", "silent");
/**
 * Resolves once every promise continuation queued so far has run (the event loop's next check
 * phase). WakeLoop does no I/O between a pass's end and what it does next (another pass, or arming
 * its poll timer): after this, whatever a finished pass leads to has happened.
 */
const settled = () => new Promise<void>((r) => setImmediate(r));

describe("WakeLoop (docs/design/events.md#relay, docs/design/notifications.md#paged-inbox-fan-out)", () => {
  it("runs nothing before start, one pass at a time, and exactly one more pass for any notifies during a pass", async () => {
    let passes = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let release: () => void = () => {};
    const loop = new WakeLoop(
      async () => {
        passes++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise<void>((r) => (release = r));
        inFlight--;
      },
      60_000,
      log,
      "failed",
    );
    loop.notify();
    expect(passes).toBe(0);
    expect(loop.stopped).toBe(true);
    loop.start();
    expect(passes).toBe(1);
    loop.notify();
    loop.notify();
    loop.notify();
    release();
    await waitUntil("the pass the notifies asked for", () => passes === 2, { timeoutMs: 10_000, intervalMs: 5 });
    await settled();
    expect(passes).toBe(2); // the three notifies asked for one more pass, not three
    release();
    await settled();
    expect([passes, inFlight]).toEqual([2, 0]); // then it waits for the poll (60 s) or a notify
    const stopping = loop.stop();
    expect(loop.stopped).toBe(true);
    await stopping;
    loop.notify();
    expect(passes).toBe(2);
    expect(maxInFlight).toBe(1);
  });

  it("polls after a pass ends and retries after a failed pass", async () => {
    let passes = 0;
    const loop = new WakeLoop(
      async () => {
        passes++;
        if (passes === 1) throw new Error("boom");
      },
      20,
      log,
      "failed",
    );
    loop.start();
    // nothing notifies: the failed pass, its retry at the next poll, and a poll after that
    await waitUntil("three passes", () => passes >= 3, { timeoutMs: 10_000, intervalMs: 5 });
    await loop.stop();
    expect(passes).toBeGreaterThanOrEqual(3);
  });

  it("stop resolves only after the pass in flight", async () => {
    let finished = false;
    let finish: () => void = () => {};
    const loop = new WakeLoop(
      async () => {
        await new Promise<void>((r) => (finish = r));
        finished = true;
      },
      60_000,
      log,
      "failed",
    );
    loop.start();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await settled();
    expect([stopped, finished]).toEqual([false, false]); // the pass is still in flight: stop waits
    finish();
    await stopping;
    expect(finished).toBe(true);
  });
});
