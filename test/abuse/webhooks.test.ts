import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually, httpClient, scaled } from "@aps/testkit";
import { joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * Webhooks cannot stall each other (docs/design/notifications.md#attempts) and hidden means
 * hidden (docs/design/notifications.md#redaction-of-hidden-content), in the distributed topology (one process per service, real PostgreSQL
 * and NATS), with local receivers (WEBHOOK_ALLOW_PRIVATE=1):
 * - a target that drips one byte every 2 s beside a healthy one and one that streams an endless
 *   answer: the healthy one gets every delivery within seconds, the endless answer is cut after
 *   its first KiBs and counts as delivered, the dripping one is cut at the attempt deadline with
 *   `lastError: "timeout"` and never has two attempts in flight;
 * - a post hidden by the platform owner: its title leaves `/v1/events` (`"[hidden]"`,
 *   `hidden: true`) and its delivery still queued for the dripping target is sent redacted once
 *   that target answers again.
 */
const ATTEMPT_MS = 1_500;
const TIMEOUT_MS = 120_000;

/** A receiver whose behaviour the test switches: `drip` (1 byte / 2 s, never ends), `endless` (64 KiB chunks forever), `ok`. */
async function receiver(mode: "drip" | "endless" | "ok") {
  const state = { mode };
  const got: { id: string; at: number; body: string }[] = [];
  /** Each request: when it arrived and when its connection closed (ms since epoch). */
  const spans: { start: number; end?: number }[] = [];
  let open = 0;
  let maxOpen = 0;
  const respond = (res: ServerResponse) => {
    if (state.mode === "ok") return void res.writeHead(204).end();
    res.writeHead(200, { "content-type": "text/plain" });
    if (state.mode === "drip") {
      res.flushHeaders();
      const t = setInterval(() => res.write("."), 2_000);
      res.on("close", () => clearInterval(t));
      return;
    }
    const chunk = Buffer.alloc(64 * 1024, 120);
    let closed = false;
    res.on("close", () => (closed = true));
    const pump = () => {
      while (!closed && res.write(chunk));
      if (!closed) res.once("drain", pump);
    };
    pump();
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const span: { start: number; end?: number } = { start: Date.now() };
    spans.push(span);
    maxOpen = Math.max(maxOpen, ++open);
    res.on("close", () => {
      span.end = Date.now();
      open--;
    });
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      got.push({ id: String(req.headers["webhook-id"]), at: Date.now(), body });
      respond(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    spans,
    state,
    maxOpen: () => maxOpen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("webhooks cannot stall each other; hidden posts are redacted (distributed)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let owner: JoinedAgent;
  let drip: Awaited<ReturnType<typeof receiver>>;
  let healthy: Awaited<ReturnType<typeof receiver>>;
  let endless: Awaited<ReturnType<typeof receiver>>;
  const hooks: Record<string, string> = {};
  const posts: string[] = [];

  beforeAll(async () => {
    [drip, healthy, endless] = await Promise.all([receiver("drip"), receiver("ok"), receiver("endless")]);
    sys = await startSystem("distributed", {
      env: {
        JOINS_PER_SOURCE_PER_DAY: "1000",
        POSTS_PER_DAY: "1000",
        WEBHOOK_ALLOW_PRIVATE: "1",
        WEBHOOK_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_MS),
        // many quick retries: the dripping endpoint must not be disabled during the test
        WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 40 }, () => "100").join(","),
        WEBHOOK_POLL_MS: "50",
      },
    });
    req = httpClient(sys.baseUrl);
    owner = await joinAgent(sys, "hook owner");
    for (const [name, r] of Object.entries({ drip, healthy, endless })) {
      const c = await req("POST", "/me/webhooks", {
        key: owner.apiKey,
        body: { url: r.url, events: ["post.created"] },
      });
      expect(c.status).toBe(201);
      hooks[name] = c.body.id as string;
    }
  }, TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([drip?.close(), healthy?.close(), endless?.close()]);
    await sys?.stop();
  }, TIMEOUT_MS);

  const deliveries = async (hook: string) =>
    (await req("GET", `/me/webhooks/${hooks[hook]}/deliveries?limit=100`, { key: owner.apiKey })).body.items as {
      id: string;
      eventId: string;
      status: string;
      attempts: number;
      lastError: string | null;
    }[];

  it(
    "a dripping target beside a healthy one: the healthy one gets every delivery within seconds, the dripping one times out per attempt",
    async () => {
      const N = 8;
      const t0 = Date.now();
      for (let i = 0; i < N; i++) {
        const p = await req("POST", "/posts", {
          key: owner.apiKey,
          body: { title: `Delivered ${i}`, body: "b", is_arch_design: false },
        });
        expect(p.status).toBe(201);
        posts.push(p.body.id as string);
      }
      const ids = (r: { got: { body: string }[] }) =>
        new Set(r.got.map((g) => (JSON.parse(g.body) as { data: { postId: string } }).data.postId));
      await eventually(
        async () => {
          expect([...ids(healthy)].filter((id) => posts.includes(id)).length).toBe(N);
          expect([...ids(endless)].filter((id) => posts.includes(id)).length).toBe(N);
        },
        10_000,
        50,
      );
      const waited = Date.now() - t0;
      console.log(`[abuse/webhooks] ${N} posts reached the healthy and the endless-answer targets in ${waited} ms`);
      // the endless answer was cut after its first KiBs: every delivery succeeded at its first attempt
      await eventually(async () => {
        const e = await deliveries("endless");
        expect(e.map((d) => [d.status, d.attempts])).toEqual(e.map(() => ["succeeded", 1]));
      }, 5_000);

      // the dripping target: each attempt ends at the deadline, never two at once, "timeout" shown
      await eventually(
        async () => {
          const d = await deliveries("drip");
          expect(d.some((x) => x.attempts >= 1 && x.lastError === "timeout")).toBe(true);
          expect(drip.spans.filter((s) => s.end !== undefined).length).toBeGreaterThanOrEqual(2);
        },
        3 * ATTEMPT_MS + 5_000,
        100,
      );
      // each attempt is cut at ATTEMPT_MS; the slack for the cut to reach the peer stretches on a
      // loaded machine (docs/design/tests.md "Time in assertions")
      for (const s of drip.spans.filter((x) => x.end !== undefined))
        expect(s.end! - s.start).toBeLessThan(ATTEMPT_MS + scaled(1_000));
      expect(drip.maxOpen()).toBe(1);
    },
    TIMEOUT_MS,
  );

  it(
    "a hidden post is redacted in /v1/events and in its delivery not yet sent",
    async () => {
      const secret = "Zymurgical quokka advertisement";
      const p = await req("POST", "/posts", {
        key: owner.apiKey,
        body: { title: secret, body: "Buy now.", is_arch_design: false },
      });
      expect(p.status).toBe(201);
      const postId = p.body.id as string;
      const feedOf = async () =>
        (
          (await req("GET", "/events?types=post.created&limit=100")).body.items as {
            eventId: string;
            data: Record<string, unknown>;
          }[]
        ).filter((e) => e.data.postId === postId);
      const [created] = await (async () => {
        let got: Awaited<ReturnType<typeof feedOf>> = [];
        await eventually(async () => {
          got = await feedOf();
          expect(got).toHaveLength(1);
        }, 10_000);
        return got;
      })();
      expect(created!.data.title).toBe(secret);
      // its delivery to the dripping target waits behind the earlier ones (one attempt at a time)
      await eventually(async () => {
        const d = (await deliveries("drip")).find((x) => x.eventId === created!.eventId);
        expect(d?.status).toBe("pending");
      }, 10_000);

      const hidden = await req("POST", `/admin/posts/${postId}/hide`, {
        key: sys.adminToken,
        body: { reason: "advertising" },
      });
      expect(hidden.status).toBe(200);
      await eventually(async () => {
        const [e] = await feedOf();
        expect(e!.data).toMatchObject({ postId, title: "[hidden]", hidden: true });
      }, 10_000);
      const feed = await req("GET", "/events?limit=100");
      expect(feed.text).not.toContain("Zymurgical");

      // the dripping target heals: every queued delivery arrives, this one redacted
      drip.state.mode = "ok";
      await eventually(
        async () => {
          const bodies = drip.got.map((g) => JSON.parse(g.body) as { data: Record<string, unknown> });
          expect(bodies.some((b) => b.data.postId === postId)).toBe(true);
        },
        20_000,
        100,
      );
      const mine = drip.got.filter((g) => (JSON.parse(g.body) as { data: { postId: string } }).data.postId === postId);
      for (const g of mine.slice(-1)) {
        expect(g.body).not.toContain("Zymurgical");
        expect(JSON.parse(g.body)).toMatchObject({ type: "post.created", data: { title: "[hidden]", hidden: true } });
      }
      // the other posts' deliveries keep their text
      const other = drip.got.find((g) => g.body.includes("Delivered"));
      expect(other).toBeDefined();
    },
    TIMEOUT_MS,
  );
});
