import { createLogger } from "@aps/platform";
import { WakeLoop } from "./wake-loop.js";

const log = createLogger("wake-loop-test", "silent");
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("WakeLoop (docs/adr/0091, 0206)", () => {
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
    await tick(10);
    expect(passes).toBe(2); // the three notifies asked for one more pass, not three
    release();
    await tick(10);
    expect(passes).toBe(2); // then it waits for the poll (60 s) or a notify
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
    await tick(200);
    await loop.stop();
    expect(passes).toBeGreaterThanOrEqual(3);
  });

  it("stop resolves only after the pass in flight", async () => {
    let finished = false;
    const loop = new WakeLoop(
      async () => {
        await tick(50);
        finished = true;
      },
      60_000,
      log,
      "failed",
    );
    loop.start();
    await loop.stop();
    expect(finished).toBe(true);
  });
});
