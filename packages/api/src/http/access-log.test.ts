import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import express from "express";
import { createLogger } from "@aps/platform";
import { waitUntil } from "@aps/testkit";
import { accessLog } from "./access-log.js";

/**
 * The access log (docs/observability.md "Logs"): one info line per answered request that leads to
 * its trace and its request id, with the route template, and without the query string or any
 * header; none for the probes and scrapes.
 */
describe("access log: one line per request", () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString("utf8").split("\n").filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use(accessLog(createLogger("gateway", "info", sink)));
  // as the gateway's standard headers: the caller's request id, else a new one
  app.use((req, res, next) => {
    res.setHeader("X-Request-Id", req.header("x-request-id") ?? randomUUID());
    next();
  });
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get(
    "/v1/posts/:id",
    (req, res) => void res.status(req.params.id === "p_gone" ? 404 : 200).json({ id: req.params.id }),
  );
  let base = "";
  let server: ReturnType<typeof app.listen>;
  beforeAll(async () => {
    server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** The request lines logged, once there are `n` (a line is written when its answer has finished). */
  const requestLines = (n: number) =>
    waitUntil(`${n} access-log lines`, () => {
      const got = lines.filter((l) => l.msg === "request");
      return got.length >= n ? got : undefined;
    });

  it("logs method, route template, path, status, duration, request id and the caller's trace id; no query, no headers", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const r = await fetch(`${base}/v1/posts/p_1?token=secret-in-query`, {
      headers: {
        "x-request-id": "req-42",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        authorization: "Bearer aps_live_secret",
      },
    });
    expect(r.status).toBe(200);
    const gone = await fetch(`${base}/v1/posts/p_gone`);
    expect(gone.status).toBe(404);
    const [first, second] = await requestLines(2);
    expect(first).toMatchObject({
      level: 30,
      service: "gateway",
      method: "GET",
      route: "/v1/posts/:id",
      path: "/v1/posts/p_1",
      status: 200,
      requestId: "req-42",
      trace_id: traceId,
    });
    expect(typeof first!.ms).toBe("number");
    expect(first!.bytes).toBe(Number(r.headers.get("content-length")));
    expect(second).toMatchObject({
      path: "/v1/posts/p_gone",
      status: 404,
      requestId: gone.headers.get("x-request-id"),
    });
    expect(second!.trace_id).toBeUndefined();
    const text = JSON.stringify(lines);
    expect([text.includes("secret-in-query"), text.includes("aps_live_secret")]).toEqual([false, false]);
  });

  it("costs nothing below info: no line, no 'finish' listener of its own", async () => {
    /** `finish` listeners on the answer when the handler runs, behind `use` (or nothing). */
    const listenersWith = async (use?: express.RequestHandler) => {
      const app = express();
      if (use) app.use(use);
      let n = -1;
      app.get("/v1/x", (_req, res) => {
        n = res.listenerCount("finish");
        res.json({});
      });
      const s = app.listen(0, "127.0.0.1");
      await once(s, "listening");
      await fetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/x`);
      await new Promise<void>((r) => s.close(() => r()));
      return n;
    };
    const before = lines.length;
    const baseline = await listenersWith();
    expect(await listenersWith(accessLog(createLogger("gateway", "warn", sink)))).toBe(baseline);
    expect(await listenersWith(accessLog(createLogger("gateway", "info", sink)))).toBe(baseline + 1);
    expect(lines.length).toBe(before + 1);
  });

  it("does not log the probes", async () => {
    const before = (await requestLines(0)).length;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/v1/posts/p_2`)).status).toBe(200);
    const after = await requestLines(before + 1);
    expect(after.slice(before).map((l) => l.path)).toEqual(["/v1/posts/p_2"]);
  });
});
