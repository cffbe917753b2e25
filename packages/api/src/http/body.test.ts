import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { request } from "node:http";
import express, { type ErrorRequestHandler } from "express";
import { ApsError } from "@aps/platform";
import { waitUntil } from "@aps/testkit";
import { requireCompleteBody, requireJsonBody } from "./body.js";

/**
 * A cut-off upload never reaches a handler (docs/design/edge.md#idempotency-key). A hold before the parser stands in
 * for a loaded gateway: express.json runs only once the client has left (its connection closed),
 * and body-parser 2 then passes the request on with `req.body` undefined.
 */
describe("requireCompleteBody: a body that did not arrive in full starts nothing", () => {
  /**
   * An app with the body middlewares (and the guard when `guard`); with `untilClientLeft`, each
   * request is held before the parser until its connection has closed. `arrived` resolves when the
   * first request reached the app; `handled` and `errors` record what became of the requests.
   */
  async function serve(untilClientLeft: boolean, guard: boolean) {
    const handled: unknown[] = [];
    const errors: string[] = [];
    let reached!: () => void;
    const arrived = new Promise<void>((r) => (reached = r));
    const app = express();
    app.use((req, _res, next) => {
      reached();
      if (!untilClientLeft) return next();
      // once the server has dealt with the close itself (the request is aborted): then the parser
      const go = () => setImmediate(next);
      if (req.socket.destroyed) go();
      else req.socket.once("close", go);
    });
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
    return { server, handled, errors, arrived, port: (server.address() as AddressInfo).port };
  }

  /**
   * Sends the headers and 20 bytes of a longer JSON body, then drops the connection once the
   * server has the request (`arrived`).
   */
  async function cutOffUpload(port: number, arrived: Promise<void>) {
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
      r.write(raw.slice(0, 20), () => void arrived.then(() => (r.destroy(), resolve())));
    });
  }

  it("without the guard, body-parser hands an already-ended request to the handler (why the guard exists)", async () => {
    const s = await serve(true, false);
    try {
      await cutOffUpload(s.port, s.arrived);
      await waitUntil("the handler to run", () => s.handled.length > 0 || s.errors.length > 0, { timeoutMs: 5_000 });
      expect(s.handled).toEqual([undefined]);
      expect(s.errors).toEqual([]);
    } finally {
      s.server.close();
    }
  });

  it("with the guard, the handler never runs and the request fails as invalid_request", async () => {
    const s = await serve(true, true);
    try {
      await cutOffUpload(s.port, s.arrived);
      // the error handler ends the request's way through the app: the handler can no longer run
      await waitUntil("the request to fail", () => s.errors.length > 0 || s.handled.length > 0, { timeoutMs: 5_000 });
      expect(s.handled).toEqual([]);
      expect(s.errors).toEqual(["invalid_request"]);
    } finally {
      s.server.close();
    }
  });

  it("a complete body and a bodiless request pass the guard", async () => {
    const s = await serve(false, true);
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
