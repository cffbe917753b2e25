import { createServer, request, type Server } from "node:http";
import { Writable } from "node:stream";
import type { AddressInfo } from "node:net";
import express from "express";
import { createLogger } from "@aps/platform";
import { eventually, waitUntil } from "@aps/testkit";
import { ReadCache, type ReadScope } from "./read-cache.js";
import { readCacheShortcut } from "./shortcut.js";
import { RequestRateLimiter } from "../http/ratelimit.js";

/**
 * The read cache on its own (docs/design/edge.md#read-cache-and-etags), behind a real express app and HTTP: what is served
 * from memory and what is produced again, the byte bound of the LRU, invalidation by post and by
 * collection (also of a miss still being produced), and the ETag/304 exchange of RFC 9110
 * §13.1.2, and the shortcut in front of the routes (docs/design/edge.md#read-cache-shortcut). The "backend" is a counter of
 * how often a route body was produced; `routed` counts how often a route handler ran at all.
 */
interface Harness {
  cache: ReadCache;
  url: string;
  /** How often each key's body was produced. */
  produced: Map<string, number>;
  /** How often a route handler ran, by exact URL (a shortcut answer runs none). */
  routed: Map<string, number>;
  /** Version mixed into every body, so a re-produced body differs from the cached one. */
  version: { n: number };
  /** When set, production of the next body waits for this promise. */
  gate: { wait?: Promise<void> };
  close(): Promise<void>;
}

/**
 * The harness's clock (ms), moved by the TTL tests instead of waiting; reset by each harness (to
 * 1,000: lru-cache takes an entry stored at time 0 for one without a TTL).
 */
const clock = { ms: 1_000 };

async function harness(
  ttlMs = 60_000,
  maxBytes = 1 << 20,
  accessLog?: Writable,
  limiter = new RequestRateLimiter({ keyedPerMinute: 1e6, anonPerMinute: 1e6 }, { kind: "memory" }),
): Promise<Harness> {
  clock.ms = 1_000;
  const cache = new ReadCache({ ttlMs, maxBytes, now: () => clock.ms });
  const produced = new Map<string, number>();
  const routed = new Map<string, number>();
  const version = { n: 0 };
  const gate: Harness["gate"] = {};
  const app = express();
  app.set("etag", false);
  const route =
    (key: string, scope: ReadScope, size = 10) =>
    async (req: express.Request, res: express.Response) => {
      routed.set(req.originalUrl, (routed.get(req.originalUrl) ?? 0) + 1);
      await cache.serve(req, res, key, scope, async () => {
        produced.set(key, (produced.get(key) ?? 0) + 1);
        const v = version.n;
        if (gate.wait) await gate.wait;
        return { key, v, pad: "x".repeat(size) };
      });
    };
  app.get("/posts", route("/posts", { kind: "collection" }));
  app.get("/posts/:id", (req, res) =>
    route(`/posts/${req.params.id}`, { kind: "post", postId: req.params.id })(req, res),
  );
  app.get("/search", route("/search", { kind: "search" }));
  app.get("/big/:n", (req, res) => route(`/big/${req.params.n}`, { kind: "collection" }, 10_000)(req, res));
  app.get("/mine", async (req, res) => {
    await cache.serveUncached(req, res, async () => ({ mine: version.n }));
  });
  const server: Server = await new Promise((resolve) => {
    // as app.ts: the shortcut in front of the app
    const shortcut = readCacheShortcut(
      {
        reads: cache,
        limiter,
        // this harness's routes take no keys (the keyed shortcut is tested in test/e2e/gateway-cache.test.ts)
        keys: { authenticate: () => Promise.reject(new Error("no keys here")) },
        loopbackPerAgent: false,
        trust: () => false,
        skillVersion: 1,
        log: createLogger("read-cache-test", accessLog ? "info" : "silent", accessLog),
        accessLog: accessLog !== undefined,
        pageCallSecret: "page-call-secret-of-this-test",
      },
      app,
    );
    const s = createServer(shortcut).listen(0, "127.0.0.1", () => resolve(s));
  });
  return {
    cache,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    produced,
    routed,
    version,
    gate,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A log destination that keeps every JSON line written to it, parsed, in `lines`. */
function logSink(): { lines: Record<string, unknown>[]; sink: Writable } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString("utf8").split("\n").filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, sink };
}

/** A GET with a body (fetch refuses to send one): its status. */
function getWithBody(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
    const r = request(url, { method: "GET", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    r.on("error", reject);
    r.end(body);
  });
}

describe("ReadCache", () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it("serves a repeated GET from memory with the same bytes and strong ETag", async () => {
    h = await harness();
    const a = await fetch(`${h.url}/posts`);
    const b = await fetch(`${h.url}/posts`);
    expect(a.status).toBe(200);
    expect(a.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const etag = a.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(b.headers.get("etag")).toBe(etag);
    expect(await b.text()).toBe(await a.text());
    expect(h.produced.get("/posts")).toBe(1);
  });

  it("answers an anonymous GET a route answered from a fresh entry before routing, same bytes, ETag and 304 (docs/design/edge.md#read-cache-shortcut)", async () => {
    h = await harness();
    const a = await fetch(`${h.url}/posts/p_1`);
    const etag = a.headers.get("etag")!;
    const b = await fetch(`${h.url}/posts/p_1`);
    const c = await fetch(`${h.url}/posts/p_1`, { headers: { "if-none-match": etag } });
    expect([b.status, b.headers.get("etag"), b.headers.get("content-type"), await b.text()]).toEqual([
      200,
      etag,
      "application/json; charset=utf-8",
      await a.text(),
    ]);
    expect([c.status, await c.text()]).toEqual([304, ""]);
    expect(h.routed.get("/posts/p_1")).toBe(1);
    // another exact URL of the same entry goes through its route once
    await fetch(`${h.url}/posts/p_1?x=1`);
    await fetch(`${h.url}/posts/p_1?x=1`);
    expect(h.routed.get("/posts/p_1?x=1")).toBe(1);
  });

  it("an answer of the shortcut gets its access-log line, under its route's template (docs/design/edge.md#read-cache-shortcut)", async () => {
    const { lines, sink } = logSink();
    h = await harness(60_000, 1 << 20, sink);
    await fetch(`${h.url}/posts/p_1?x=1`); // through the route (this harness's app logs nothing itself)
    const b = await fetch(`${h.url}/posts/p_1?x=1`, { headers: { "x-request-id": "logged-1" } });
    const body = await b.arrayBuffer();
    const c = await fetch(`${h.url}/posts/p_1?x=1`, { headers: { "if-none-match": b.headers.get("etag")! } });
    expect(c.status).toBe(304);
    await waitUntil("two access-log lines", () => lines.length >= 2);
    const fields = (l: Record<string, unknown>) => [l.msg, l.method, l.route, l.path, l.status, l.bytes, typeof l.ms];
    expect(lines.map(fields)).toEqual([
      ["request", "GET", "/posts/:id", "/posts/p_1", 200, body.byteLength, "number"],
      ["request", "GET", "/posts/:id", "/posts/p_1", 304, undefined, "number"],
    ]);
    expect(lines[0]!.requestId).toBe("logged-1");
    expect(lines[1]!.requestId).toBe(c.headers.get("x-request-id"));
    expect(h.routed.get("/posts/p_1?x=1")).toBe(1);
  });

  it("a fault in the shortcut's counting leaves the request to the route, logged, and the process up", async () => {
    const { lines, sink } = logSink();
    const broken = new RequestRateLimiter({ keyedPerMinute: 10, anonPerMinute: 10 }, { kind: "memory" });
    let faults = 0;
    h = await harness(60_000, 1 << 20, sink, broken);
    await fetch(`${h.url}/posts/p_3`);
    broken.consume = () => {
      faults++;
      return Promise.reject(new Error("counter store fault"));
    };
    const r = await fetch(`${h.url}/posts/p_3`);
    expect(r.status).toBe(200);
    expect(faults).toBe(1);
    expect(h.routed.get("/posts/p_3")).toBe(2);
    await waitUntil("the fault logged", () => lines.find((l) => l.msg === "rate limiter failed; request not counted"));
  });

  it("the shortcut leaves to the route: a request with credentials or a body, an invalidated entry, a stale list, a long URL (docs/design/edge.md#read-cache-shortcut)", async () => {
    h = await harness();
    await fetch(`${h.url}/posts`);
    await fetch(`${h.url}/posts`, { headers: { authorization: "Bearer k" } });
    await getWithBody(`${h.url}/posts`, "{}");
    expect(h.routed.get("/posts")).toBe(3);
    h.version.n++;
    h.cache.invalidatePost("p_9");
    const fresh = await fetch(`${h.url}/posts`);
    expect(((await fresh.json()) as { v: number }).v).toBe(1);
    expect(h.routed.get("/posts")).toBe(4);
    // a vote seen as an event: the route serves the stale list and refreshes it
    h.cache.invalidatePost("p_9", "revalidate");
    await fetch(`${h.url}/posts`);
    expect(h.routed.get("/posts")).toBe(5);
    h.cache.invalidateAll();
    await fetch(`${h.url}/posts`);
    expect(h.routed.get("/posts")).toBe(6);
    await fetch(`${h.url}/posts`);
    expect(h.routed.get("/posts")).toBe(6);
    // a URL too long to remember (the shortcut's memory is bounded) always goes to its route
    const long = `/posts?pad=${"x".repeat(600)}`;
    for (let i = 0; i < 2; i++) await fetch(h.url + long);
    expect(h.routed.get(long)).toBe(2);
  });

  it("answers 304 without a body to a matching If-None-Match (also weak, listed or *), 200 otherwise", async () => {
    h = await harness();
    const first = await fetch(`${h.url}/posts/p_1`);
    const etag = first.headers.get("etag")!;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const r = await fetch(`${h.url}/posts/p_1`, { headers: { "if-none-match": inm } });
      expect({ inm, status: r.status, etag: r.headers.get("etag"), body: await r.text() }).toEqual({
        inm,
        status: 304,
        etag,
        body: "",
      });
    }
    const other = await fetch(`${h.url}/posts/p_1`, { headers: { "if-none-match": '"not-it"' } });
    expect(other.status).toBe(200);
    // a body produced for the caller alone is not cached, yet revalidates the same way
    const mine = await fetch(`${h.url}/mine`);
    const again = await fetch(`${h.url}/mine`, { headers: { "if-none-match": mine.headers.get("etag")! } });
    expect(again.status).toBe(304);
    h.version.n++;
    const changed = await fetch(`${h.url}/mine`, { headers: { "if-none-match": mine.headers.get("etag")! } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(mine.headers.get("etag"));
  });

  it("invalidatePost drops that post and every collection, not the other posts", async () => {
    h = await harness();
    for (const p of ["/posts", "/posts/p_1", "/posts/p_2"]) await fetch(h.url + p);
    h.version.n++;
    h.cache.invalidatePost("p_1");
    const bodies = Object.fromEntries(
      await Promise.all(
        ["/posts", "/posts/p_1", "/posts/p_2"].map(async (p) => [
          p,
          ((await (await fetch(h.url + p)).json()) as { v: number }).v,
        ]),
      ),
    );
    expect(bodies).toEqual({ "/posts": 1, "/posts/p_1": 1, "/posts/p_2": 0 });
    expect(Object.fromEntries(h.produced)).toEqual({ "/posts": 2, "/posts/p_1": 2, "/posts/p_2": 1 });
    h.version.n++;
    h.cache.invalidateAll();
    expect(((await (await fetch(`${h.url}/posts/p_2`)).json()) as { v: number }).v).toBe(2);
  });

  it("invalidateSearch drops search results only; a post invalidation drops them too", async () => {
    h = await harness();
    for (const p of ["/posts", "/search", "/posts/p_1"]) await fetch(h.url + p);
    h.version.n++;
    h.cache.invalidateSearch();
    const v = async (p: string) => ((await (await fetch(h.url + p)).json()) as { v: number }).v;
    expect({ list: await v("/posts"), search: await v("/search"), post: await v("/posts/p_1") }).toEqual({
      list: 0,
      search: 1,
      post: 0,
    });
    h.version.n++;
    h.cache.invalidatePost("p_2");
    expect({ list: await v("/posts"), search: await v("/search"), post: await v("/posts/p_1") }).toEqual({
      list: 2,
      search: 2,
      post: 0,
    });
  });

  it("concurrent misses of one key share one production; a miss invalidated while produced is answered but not kept", async () => {
    h = await harness();
    let open!: () => void;
    h.gate.wait = new Promise((r) => (open = r));
    const waiting = Promise.all([fetch(`${h.url}/posts`), fetch(`${h.url}/posts`), fetch(`${h.url}/posts`)]);
    // all three have reached the route (on a loaded machine 100 ms was not always enough)
    await eventually(async () => expect(h.routed.get("/posts")).toBe(3), 10_000, 10);
    expect(h.produced.get("/posts")).toBe(1);
    // a write lands while the list is being produced from the old state
    h.cache.invalidatePost("p_9");
    h.gate.wait = undefined;
    h.version.n++;
    // a request after the write does not wait for the old production
    const after = await fetch(`${h.url}/posts`);
    expect(((await after.json()) as { v: number }).v).toBe(1);
    open();
    const old = await waiting;
    expect(await Promise.all(old.map(async (r) => ((await r.json()) as { v: number }).v))).toEqual([0, 0, 0]);
    // what is cached now is the post-write body
    expect(((await (await fetch(`${h.url}/posts`)).json()) as { v: number }).v).toBe(1);
    expect(h.produced.get("/posts")).toBe(2);
  });

  it("a vote seen as an event ('revalidate') serves the stale list once while one refresh runs behind it; the post's detail is dropped (docs/design/edge.md#cache-invalidation-by-events)", async () => {
    h = await harness();
    const v = async (p: string) => ((await (await fetch(h.url + p)).json()) as { v: number }).v;
    expect(await v("/posts")).toBe(0);
    expect(await v("/posts/p_1")).toBe(0);
    // the next version's bodies are one byte longer ({"v":10}): a stored refresh shows in the cache's bytes
    h.version.n = 10;
    let open!: () => void;
    h.gate.wait = new Promise((r) => (open = r));
    // a burst of votes elsewhere: one refresh, not one per vote or per request
    for (let i = 0; i < 5; i++) h.cache.invalidatePost("p_1", "revalidate");
    const stale = await Promise.all([v("/posts"), v("/posts"), v("/posts")]);
    expect(stale).toEqual([0, 0, 0]);
    expect(h.produced.get("/posts")).toBe(2);
    const held = h.cache.stats.bytes;
    h.gate.wait = undefined;
    open();
    await waitUntil("the refreshed list to be stored", () => h.cache.stats.bytes === held + 1, { timeoutMs: 10_000 });
    expect(await v("/posts")).toBe(10);
    expect(h.produced.get("/posts")).toBe(2);
    // the post itself is produced again before answering
    expect(await v("/posts/p_1")).toBe(10);
    expect(h.produced.get("/posts/p_1")).toBe(2);
  });

  it("a write through this gateway ('drop') after a vote event still answers the fresh list (read-your-writes)", async () => {
    h = await harness();
    const v = async (p: string) => ((await (await fetch(h.url + p)).json()) as { v: number }).v;
    await v("/posts");
    h.version.n++;
    h.cache.invalidatePost("p_1", "revalidate");
    h.version.n++;
    h.cache.invalidatePost("p_2");
    expect(await v("/posts")).toBe(2);
  });

  it("a stale list is never served past its TTL", async () => {
    h = await harness(150);
    const v = async (p: string) => ((await (await fetch(h.url + p)).json()) as { v: number }).v;
    await v("/posts");
    h.version.n++;
    h.cache.invalidatePost("p_1", "revalidate");
    // past the TTL (150 ms on the cache's clock) the stale list is never served: produced again
    clock.ms += 151;
    expect(await v("/posts")).toBe(1);
  });

  it("holds at most maxBytes: least recently used entries go first", async () => {
    h = await harness(60_000, 50_000);
    for (let i = 0; i < 20; i++) {
      await fetch(`${h.url}/big/${i}`);
      expect(h.cache.stats.bytes).toBeLessThanOrEqual(50_000);
    }
    // each entry is ~10 KB: four fit
    expect(h.cache.stats.entries).toBe(4);
    await fetch(`${h.url}/big/19`);
    expect(h.produced.get("/big/19")).toBe(1);
    await fetch(`${h.url}/big/0`);
    expect(h.produced.get("/big/0")).toBe(2);
  });

  it("expires entries after ttlMs (the bound when an invalidating event is lost)", async () => {
    const ttlMs = 500;
    h = await harness(ttlMs);
    await fetch(`${h.url}/posts/p_1`);
    clock.ms += ttlMs - 1;
    await fetch(`${h.url}/posts/p_1`);
    expect(h.produced.get("/posts/p_1")).toBe(1);
    clock.ms += 2;
    await fetch(`${h.url}/posts/p_1`);
    expect(h.produced.get("/posts/p_1")).toBe(2);
  });

  it("with a TTL or size of 0 caches nothing but still sends ETags", async () => {
    h = await harness(0);
    const a = await fetch(`${h.url}/posts`);
    const b = await fetch(`${h.url}/posts`, { headers: { "if-none-match": a.headers.get("etag")! } });
    expect(b.status).toBe(304);
    expect(h.produced.get("/posts")).toBe(2);
    expect(h.cache.stats).toEqual({ entries: 0, bytes: 0, maxBytes: 0 });
  });
});
