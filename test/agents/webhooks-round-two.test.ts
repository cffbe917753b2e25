import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { httpClient, waitUntil } from "@aps/testkit";
import { startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Webhooks, round two (item 6; docs/design/notifications.md#ping-redelivery-and-secret-rotation): a ping on
 * demand, redelivery of one delivery with its `webhook-id`, secret rotation with an overlap window
 * in which each delivery carries both signatures, and the public event's `eventId` and `cursor` in
 * every payload. A real receiver on loopback (WEBHOOK_ALLOW_PRIVATE=1) verifies each delivery with
 * `standardwebhooks`, the specification's own library. Embedded: the rules live in the
 * notifications service and the gateway, which every mode runs alike.
 */
const TIMEOUT_MS = 120_000;
/**
 * WEBHOOK_SECRET_OVERLAP_MS: long beside a ping's delivery (50 ms polls), so the ping sent in the
 * window is delivered in it on a loaded machine too; the test waits it out (the notifications
 * service reads PostgreSQL's clock, no injectable one).
 */
const OVERLAP_MS = 8_000;

interface Got {
  id: string;
  body: string;
  headers: IncomingMessage["headers"];
}

/** A real HTTP receiver on loopback; `status()` is the answer of every request. */
async function receiver(status: () => number = () => 204) {
  const got: Got[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      got.push({ id: String(req.headers["webhook-id"]), body, headers: req.headers });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** True when `secret` verifies `g` (Standard Webhooks: any one of the header's signatures). */
function verifies(secret: string, g: Got): boolean {
  try {
    new Webhook(secret).verify(g.body, {
      "webhook-id": String(g.headers["webhook-id"]),
      "webhook-timestamp": String(g.headers["webhook-timestamp"]),
      "webhook-signature": String(g.headers["webhook-signature"]),
    });
    return true;
  } catch {
    return false;
  }
}

/** Waits (≤ 20 s, stretched on a loaded machine) for `f` to return a value; an error it throws fails at once. */
const until = <T>(what: string, f: () => T | undefined | Promise<T | undefined>): Promise<NonNullable<T>> =>
  waitStrictly(what, f, { timeoutMs: 20_000, intervalMs: 50 });

describe("webhooks round two: ping, redeliver, rotate, eventId (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let key: string;
  let answer = 204;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let hookId: string;
  let secret: string;

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: {
        WEBHOOK_ALLOW_PRIVATE: "1",
        WEBHOOK_RETRY_SCHEDULE: "100",
        WEBHOOK_POLL_MS: "50",
        WEBHOOK_SECRET_OVERLAP_MS: String(OVERLAP_MS),
      },
    });
    req = httpClient(sys.baseUrl);
    rx = await receiver(() => answer);
    const j = await req("POST", "/join", { body: { name: "hook owner" } });
    key = j.body.apiKey as string;
    const c = await req("POST", "/me/webhooks", { key, body: { url: rx.url, events: ["post.created"] } });
    expect(c.status).toBe(201);
    hookId = c.body.id as string;
    secret = c.body.secret as string;
  }, TIMEOUT_MS);
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("POST /me/webhooks/{id}/ping sends a signed webhook.ping now, listed among the deliveries (202)", async () => {
    const p = await req("POST", `/me/webhooks/${hookId}/ping`, { key });
    expect([p.status, typeof p.body.deliveryId]).toEqual([202, "string"]);
    const g = await until("the ping", () => rx.got.find((x) => x.id === p.body.deliveryId));
    expect(verifies(secret, g)).toBe(true);
    const body = JSON.parse(g.body) as Record<string, unknown>;
    expect(body.type).toBe("webhook.ping");
    expect(typeof body.eventId).toBe("string");
    expect(body.data).toMatchObject({ webhookId: hookId });
    const list = await until("the ping delivery to succeed", async () => {
      const l = await req("GET", `/me/webhooks/${hookId}/deliveries`, { key });
      const items = l.body.items as { id: string; status: string; type: string }[];
      return items.find((d) => d.id === p.body.deliveryId && d.status === "succeeded");
    });
    expect(list.type).toBe("webhook.ping");
    // unknown webhook: 404; another agent's: 404
    const other = await req("POST", "/join", { body: { name: "other" } });
    const o = await req("POST", `/me/webhooks/${hookId}/ping`, { key: other.body.apiKey as string });
    expect([o.status, o.body.code]).toEqual([404, "not_found"]);
  });

  it("every event payload carries the public event's eventId and cursor (as GET /events lists it)", async () => {
    const before = rx.got.length;
    const post = await req("POST", "/posts", {
      key,
      body: { title: "Hook me", body: "Details.", is_arch_design: true },
    });
    expect(post.status).toBe(201);
    const g = await until("the post.created delivery", () =>
      rx.got.slice(before).find((x) => (JSON.parse(x.body) as { type: string }).type === "post.created"),
    );
    const body = JSON.parse(g.body) as { eventId: string; cursor: string; data: { postId: string } };
    expect(body.data.postId).toBe(post.body.id);
    const feed = await req("GET", "/events?types=post.created", {});
    const item = (feed.body.items as { eventId: string; cursor: string; data: { postId: string } }[]).find(
      (e) => e.data.postId === post.body.id,
    );
    expect(item).toBeDefined();
    expect([body.eventId, body.cursor]).toEqual([item!.eventId, item!.cursor]);
  });

  it("redeliver sends the same delivery again with the same webhook-id (202), even after it failed", async () => {
    answer = 500; // the one attempt and the one retry fail: the delivery fails
    const p = await req("POST", `/me/webhooks/${hookId}/ping`, { key });
    expect(p.status).toBe(202);
    const id = p.body.deliveryId as string;
    await until("the ping to fail", async () => {
      const l = await req("GET", `/me/webhooks/${hookId}/deliveries`, { key });
      return (l.body.items as { id: string; status: string }[]).find((d) => d.id === id && d.status === "failed");
    });
    const hook = await req("GET", `/me/webhooks/${hookId}`, { key });
    expect(hook.body.disabledAt).toBeNull(); // a ping never disables its endpoint
    answer = 204;
    const sent = rx.got.filter((x) => x.id === id).length;
    const r = await req("POST", `/me/webhooks/${hookId}/deliveries/${id}/redeliver`, { key });
    expect([r.status, r.body.deliveryId]).toEqual([202, id]);
    const again = await until("the redelivery", () => {
      const all = rx.got.filter((x) => x.id === id);
      return all.length > sent ? all.at(-1) : undefined;
    });
    expect(verifies(secret, again)).toBe(true);
    expect(again.body).toBe(rx.got.find((x) => x.id === id)!.body);
    await until("the redelivery to succeed", async () => {
      const l = await req("GET", `/me/webhooks/${hookId}/deliveries`, { key });
      return (l.body.items as { id: string; status: string }[]).find((d) => d.id === id && d.status === "succeeded");
    });
    const missing = await req("POST", `/me/webhooks/${hookId}/deliveries/msg_01JD3Z6Q9V8XKJ4M2N5P7R9T0W/redeliver`, {
      key,
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  it("at most 5 pings and redeliveries of one webhook wait at once (a 6th is 409); a disabled webhook is 409", async () => {
    // a receiver that never answers: the first ping stays in flight, the next ones queue behind it
    const hang = createServer(() => {});
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/hook`;
      const c = await req("POST", "/me/webhooks", { key, body: { url, events: ["post.created"] } });
      const id = c.body.id as string;
      const codes: number[] = [];
      for (let i = 0; i < 6; i++) codes.push((await req("POST", `/me/webhooks/${id}/ping`, { key })).status);
      expect(codes).toEqual([202, 202, 202, 202, 202, 409]);
      const del = await req("DELETE", `/me/webhooks/${id}`, { key });
      expect(del.status).toBe(200);
      // an event delivery that fails past the schedule disables its webhook: no ping, no redelivery
      const dead = await receiver(() => 503);
      try {
        const d = await req("POST", "/me/webhooks", { key, body: { url: dead.url, events: ["post.created"] } });
        const deadId = d.body.id as string;
        await req("POST", "/posts", { key, body: { title: "Dead end", body: "Details.", is_arch_design: true } });
        await until("the webhook to be disabled", async () => {
          const h = await req("GET", `/me/webhooks/${deadId}`, { key });
          return h.body.disabledAt ? h.body : undefined;
        });
        const p = await req("POST", `/me/webhooks/${deadId}/ping`, { key });
        expect([p.status, p.body.code]).toEqual([409, "invalid_state"]);
        const failed = dead.got[0]!.id;
        const r = await req("POST", `/me/webhooks/${deadId}/deliveries/${failed}/redeliver`, { key });
        expect([r.status, r.body.code]).toEqual([409, "invalid_state"]);
      } finally {
        await dead.close();
      }
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  });

  it("rotate-secret: both signatures within the overlap window, only the new one after it", async () => {
    const t0 = Date.now();
    const r = await req("POST", `/me/webhooks/${hookId}/rotate-secret`, { key });
    const t1 = Date.now();
    expect(r.status).toBe(200);
    const fresh = r.body.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    expect(typeof r.body.previousSecretExpiresAt).toBe("string");
    // the old secret signs for WEBHOOK_SECRET_OVERLAP_MS from the rotation (same host: one clock)
    const expires = Date.parse(r.body.previousSecretExpiresAt as string);
    expect(expires).toBeGreaterThanOrEqual(t0 + OVERLAP_MS - 1);
    expect(expires).toBeLessThanOrEqual(t1 + OVERLAP_MS + 1);
    const p1 = await req("POST", `/me/webhooks/${hookId}/ping`, { key });
    const g1 = await until("a ping in the window", () => rx.got.find((x) => x.id === p1.body.deliveryId));
    expect(String(g1.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect([verifies(fresh, g1), verifies(secret, g1)]).toEqual([true, true]);
    // the window the rotation named has closed
    await waitUntil("the rotated-out secret's expiry (previousSecretExpiresAt) to pass", () => Date.now() > expires, {
      timeoutMs: OVERLAP_MS + 10_000,
    });
    const p2 = await req("POST", `/me/webhooks/${hookId}/ping`, { key });
    const g2 = await until("a ping after the window", () => rx.got.find((x) => x.id === p2.body.deliveryId));
    expect(String(g2.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect([verifies(fresh, g2), verifies(secret, g2)]).toEqual([true, false]);
  });
});
