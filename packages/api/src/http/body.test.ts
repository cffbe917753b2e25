import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { request } from "node:http";
import express, { type ErrorRequestHandler } from "express";
import { ApsError } from "@aps/platform";
import { requireCompleteBody, requireJsonBody } from "./body.js";

/**
 * A cut-off upload never reaches a handler (docs/adr/0220). The delay before the parser stands in
 * for a loaded gateway: by the time express.json runs, the client has already left, and
 * body-parser 2 then passes the request on with `req.body` undefined.
 */
describe("requireCompleteBody: a body that did not arrive in full starts nothing", () => {
  async function serve(delayMs: number, guard: boolean) {
    const handled: unknown[] = [];
    const errors: string[] = [];
    const app = express();
    app.use((_req, _res, next) => setTimeout(next, delayMs));
    app.use(requireJsonBody, express.json({ limit: "64kb" }));
    if (guard) app.use(requireCompleteBody);
    app.post("/posts", (req, res) => {
      handled.push(req.body);
      res.status(201).json({ ok: true });
    });
    const onError: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
      errors.push(err instanceof ApsError ? err.code : String((err as { type?: string }).type ?? err));
      res.status(400).end();
    };
    app.use(onError);
    const server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    return { server, handled, errors, port: (server.address() as AddressInfo).port };
  }

  /** Sends the headers and 20 bytes of a longer JSON body, then drops the connection after 50 ms. */
  async function cutOffUpload(port: number) {
    const raw = JSON.stringify({ title: "Sent once", body: "The upload broke off half-way.", is_arch_design: false });
    await new Promise<void>((resolve) => {
      const r = request({
        host: "127.0.0.1",
        port,
        path: "/posts",
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(raw)) },
      });
      r.on("error", () => resolve());
      r.write(raw.slice(0, 20), () => setTimeout(() => (r.destroy(), resolve()), 50));
    });
  }

  /** Resolves once the server has dealt with the request (after the delay, plus a margin). */
  const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("without the guard, body-parser hands an already-ended request to the handler (why the guard exists)", async () => {
    const s = await serve(300, false);
    try {
      await cutOffUpload(s.port);
      await settle(600);
      expect(s.handled).toEqual([undefined]);
    } finally {
      s.server.close();
    }
  });

  it("with the guard, the handler never runs and the request fails as invalid_request", async () => {
    const s = await serve(300, true);
    try {
      await cutOffUpload(s.port);
      await settle(600);
      expect(s.handled).toEqual([]);
      expect(s.errors).toEqual(["invalid_request"]);
    } finally {
      s.server.close();
    }
  });

  it("a complete body and a bodiless request pass the guard", async () => {
    const s = await serve(0, true);
    try {
      const base = `http://127.0.0.1:${s.port}/posts`;
      const full = await fetch(base, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "whole" }),
      });
      const empty = await fetch(base, { method: "POST" });
      expect([full.status, empty.status]).toEqual([201, 201]);
      expect(s.handled).toEqual([{ title: "whole" }, undefined]);
      expect(s.errors).toEqual([]);
    } finally {
      s.server.close();
    }
  });
});
