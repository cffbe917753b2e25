import { ReadinessCheck, type ReadinessProbe } from "./readiness.js";

/** Readiness rules (docs/adr/0111): required vs optional dependencies, one check per second at most. */
function probe(up: boolean) {
  const p = { up, calls: 0, ready: async (_ms: number) => (p.calls++, p.up) };
  return p satisfies ReadinessProbe & { up: boolean; calls: number };
}

describe("ReadinessCheck", () => {
  it("is not_ready when a required service is down, degraded when only an optional one is", async () => {
    const forum = probe(true);
    const search = probe(true);
    const check = () => new ReadinessCheck({ forum }, { knowledge: search, translation: undefined }, 0).get();
    expect(await check()).toEqual({
      status: "ready",
      dependencies: { forum: true, knowledge: true, translation: true },
      optional: ["knowledge", "translation"],
    });
    search.up = false;
    expect((await check()).status).toBe("degraded");
    forum.up = false;
    expect((await check()).status).toBe("not_ready");
  });

  it("asks each service at most once per maxAge, however many callers ask", async () => {
    // ReadinessCheck reads Date.now() (it takes no clock): the test holds it still and moves it
    const realNow = Date.now;
    let now = realNow();
    Date.now = () => now;
    try {
      const forum = probe(true);
      const check = new ReadinessCheck({ forum }, {}, 200);
      await Promise.all(Array.from({ length: 50 }, () => check.get()));
      await check.get();
      expect(forum.calls).toBe(1);
      now += 199;
      await check.get();
      expect(forum.calls).toBe(1);
      now += 1;
      await check.get();
      expect(forum.calls).toBe(2);
    } finally {
      Date.now = realNow;
    }
  });

  it("counts a probe that throws as down", async () => {
    const broken: ReadinessProbe = { ready: () => Promise.reject(new Error("channel closed")) };
    expect((await new ReadinessCheck({ identity: broken }, {}).get()).status).toBe("not_ready");
  });
});
