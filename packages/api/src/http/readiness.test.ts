import type { AddressInfo } from "node:net";
import express from "express";
import { ApsError } from "@aps/platform";
import { ReadinessCheck, readyzHandler, type ReadinessProbe } from "./readiness.js";

/** Readiness rules (docs/design/operations.md#health-and-readiness): required vs optional dependencies, one check per second at most. */
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

describe("GET /readyz and /readyz?scope=gateway", () => {
  it("the system's readiness is 503 while a required service is down; the gateway's own stays 200 and reports it", async () => {
    const identity = probe(false);
    const check = new ReadinessCheck({ identity, forum: probe(true) }, { knowledge: probe(true) }, 0);
    const app = express();
    app.get("/readyz", readyzHandler(check));
    app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err instanceof ApsError ? 400 : 500).json({ code: (err as ApsError).code });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`;
    try {
      const system = await fetch(base);
      expect(system.status).toBe(503);
      expect(await system.json()).toMatchObject({
        status: "not_ready",
        scope: "system",
        dependencies: { identity: false },
      });
      const own = await fetch(`${base}?scope=gateway`);
      expect(own.status).toBe(200);
      expect(await own.json()).toMatchObject({
        status: "not_ready",
        scope: "gateway",
        dependencies: { identity: false, forum: true },
      });
      identity.up = true;
      expect((await fetch(base)).status).toBe(200);
      const bad = await fetch(`${base}?scope=everything`);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual({ code: "invalid_request" });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
