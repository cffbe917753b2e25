import { once } from "node:events";
import type { AddressInfo } from "node:net";
import express from "express";
import { ApsError, createLogger } from "@aps/platform";
import { idempotency } from "./idempotency.js";
import { MemoryIdempotencyStore, type IdempotencyAnswer } from "./idempotency-store.js";
import { problemHandler } from "./problem.js";

/**
 * The idempotency middleware stores (or releases) the key before the answer leaves (docs/design/edge.md#idempotency-key):
 * a client that retries the instant it has its answer finds the replay, or a free key after a 400.
 * The store is the embedded one with its `finish` held back 150 ms, standing in for a slow commit
 * of the PostgreSQL store under load (the race this closes).
 */
describe("idempotency middleware: the answer is stored before it is sent (embedded store, its finish delayed 150 ms to stand in for a slow commit)", () => {
  const log = createLogger("idempotency-test", "silent");

  /** The embedded store answering `finish` late: it stores the answer 150 ms after being asked, a slow commit. */
  class SlowFinishStore extends MemoryIdempotencyStore {
    override finish(agentId: string, key: string, answer: IdempotencyAnswer): Promise<void> {
      return new Promise<void>((stored, failed) => {
        setTimeout(() => void super.finish(agentId, key, answer).then(stored, failed), 150);
      });
    }
  }

  async function serve() {
    let created = 0;
    const app = express();
    app.use(express.json());
    app.use((_req, res, next) => {
      res.locals.agent = { agentId: "a_1" };
      next();
    });
    app.use("/posts", idempotency(new SlowFinishStore(), log));
    app.post("/posts", (req, res, next) => {
      if (typeof (req.body as { body?: unknown }).body !== "string") {
        next(new ApsError("invalid_request", "body is required"));
        return;
      }
      created++;
      res.status(201).json({ id: `p_${created}` });
    });
    app.use(problemHandler(log));
    const server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/posts`;
    const post = (body: unknown, key: string) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
      });
    return { server, post, created: () => created };
  }

  it("after a 400 the same key, sent again at once with the corrected body, runs (not 422 mismatch)", async () => {
    const s = await serve();
    try {
      const invalid = await s.post({ title: "t" }, "k1");
      expect(invalid.status).toBe(400);
      const honest = await s.post({ title: "t", body: "b" }, "k1");
      expect(honest.status).toBe(201);
      expect(s.created()).toBe(1);
    } finally {
      s.server.close();
    }
  });

  it("after a 201 the same request, sent again at once, is the replay (not 409 in progress)", async () => {
    const s = await serve();
    try {
      const first = await s.post({ title: "t", body: "b" }, "k2");
      expect(first.status).toBe(201);
      const again = await s.post({ title: "t", body: "b" }, "k2");
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.json()).toEqual(await first.json());
      expect(s.created()).toBe(1);
    } finally {
      s.server.close();
    }
  });
});
