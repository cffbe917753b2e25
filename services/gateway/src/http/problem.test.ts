import express from "express";
import type { AddressInfo } from "node:net";
import { Metadata, status } from "@grpc/grpc-js";
import { ApsError, fromServiceError, type Logger } from "@aps/platform";
import { problemHandler } from "./problem.js";

/**
 * Every 5xx answer leaves a log line with its cause (docs/design/edge.md#lists-and-cursors): before, a
 * gRPC failure mapped to `internal` (e.g. a response over the message limit) answered 500 with
 * no log line at all.
 */
describe("problemHandler logs 5xx answers with their cause", () => {
  it("logs a 500 from a failed gRPC call with its status code and details, and a 503 at warn; a 4xx is not logged", async () => {
    const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const rec = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, obj, msg });
    const log = { error: rec("error"), warn: rec("warn"), info: rec("info") } as unknown as Logger;
    const tooBig = Object.assign(
      new Error("8 RESOURCE_EXHAUSTED: Received message larger than max (4500000 vs 4194304)"),
      {
        code: status.RESOURCE_EXHAUSTED,
        details: "Received message larger than max (4500000 vs 4194304)",
        metadata: new Metadata(),
      },
    );
    const app = express();
    app.get("/500", () => {
      throw fromServiceError(tooBig);
    });
    app.get("/503", () => {
      throw new ApsError("upstream_unavailable", "down", 1);
    });
    app.get("/404", () => {
      throw new ApsError("not_found", "no such post");
    });
    app.use(problemHandler(log));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/500`)).status).toBe(500);
      expect((await fetch(`${base}/503`)).status).toBe(503);
      expect((await fetch(`${base}/404`)).status).toBe(404);
    } finally {
      server.close();
    }
    expect(lines.map((l) => `${l.level} ${String(l.obj.status)} ${String(l.obj.path)}`)).toEqual([
      "error 500 /500",
      "warn 503 /503",
    ]);
    expect(lines[0]!.obj.cause).toMatchObject({
      grpcCode: status.RESOURCE_EXHAUSTED,
      details: expect.stringContaining("larger than max"),
    });
  });
});

describe("problemHandler: the gateway's own database unavailable", () => {
  it("answers 503 upstream_unavailable with Retry-After, not 500, and logs it at warn (pool timeout, terminated connection, shutdown)", async () => {
    const lines: { level: string; msg: string }[] = [];
    const rec = (level: string) => (_obj: Record<string, unknown>, msg: string) => void lines.push({ level, msg });
    const log = { error: rec("error"), warn: rec("warn"), info: rec("info") } as unknown as Logger;
    const app = express();
    app.get("/pool", () => {
      throw new Error("timeout exceeded when trying to connect");
    });
    app.get("/shutdown", () => {
      throw Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    });
    app.get("/bug", () => {
      throw new TypeError("x is undefined");
    });
    app.use(problemHandler(log));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const path of ["/pool", "/shutdown"]) {
        const res = await fetch(`${base}${path}`);
        expect({ path, status: res.status, retryAfter: res.headers.get("retry-after") }).toEqual({
          path,
          status: 503,
          retryAfter: "1",
        });
        expect(((await res.json()) as { code: string }).code).toBe("upstream_unavailable");
      }
      expect((await fetch(`${base}/bug`)).status).toBe(500);
    } finally {
      server.close();
    }
    expect(lines.map((l) => l.level)).toEqual(["warn", "warn", "error"]);
  });
});
