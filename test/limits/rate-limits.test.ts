import { join } from "node:path";
import { createLogger } from "@aps/platform";
import { loadConfig, startGateway, type GatewayHandle } from "@aps/gateway";
import { httpClient, startNode, type HttpResult, type TestProcess } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";

/**
 * Per-minute request limits (docs/design/edge.md#request-path, docs/design/identity-and-abuse.md#per-minute-request-limits) on the real PostgreSQL store:
 * `RATE_LIMIT_KEYED_PER_MINUTE` per API key and `RATE_LIMIT_ANON_PER_MINUTE` per client IP, the
 * IETF `RateLimit-Policy`/`RateLimit` headers on every answer (2xx, 4xx, 5xx, root), 429
 * `rate_limited` + `Retry-After`, counters shared by two gateway processes, and
 * `GET /v1/me/quotas`. Each scenario uses its own client IP through `X-Forwarded-For` (the
 * loopback proxy is trusted here), so the scenarios do not share a budget. A last block runs the
 * embedded all-in-one, whose single gateway counts in memory (docs/design/identity-and-abuse.md#per-minute-request-limits).
 */
const real = (await availableModes()).includes("real");
if (!real) console.warn("[rate-limits.test] NO REAL PostgreSQL + NATS: the shared rate-limit tests are SKIPPED");
/** `describe`, or without the real servers `describe.skip` with the reason in the name. */
const describeReal = real
  ? describe
  : (name: string, fn: () => void) => describe.skip(`${name} (SKIPPED: no real PostgreSQL + NATS)`, fn);

const KEYED = 40;
const ANON = 30;
const POSTS_PER_DAY = 3;
const COMMENTS_PER_DAY = 4;

/** `{policy, q, w}` of a `RateLimit-Policy` value and `{policy, r, t}` of a `RateLimit` value (draft-ietf-httpapi-ratelimit-headers-10). */
function parseRateHeaders(r: HttpResult): { policy: string; q: number; w: number; r: number; t: number } {
  const pol = r.headers.get("ratelimit-policy");
  const cur = r.headers.get("ratelimit");
  const p = /^"(\w+)";q=(\d+);w=(\d+)$/.exec(pol ?? "");
  const c = /^"(\w+)";r=(\d+);t=(\d+)$/.exec(cur ?? "");
  if (!p || !c) throw new Error(`bad RateLimit headers on ${r.status}: RateLimit-Policy=${pol} RateLimit=${cur}`);
  expect(c[1]).toBe(p[1]);
  return { policy: p[1]!, q: Number(p[2]), w: Number(p[3]), r: Number(c[2]), t: Number(c[3]) };
}

/** Asserts a 429 `rate_limited` problem with a sane Retry-After (1..window s) and `r=0`. */
function expectRateLimited(r: HttpResult, policy: string): void {
  expect({ status: r.status, type: r.headers.get("content-type"), code: r.body?.code }).toEqual({
    status: 429,
    type: "application/problem+json; charset=utf-8",
    code: "rate_limited",
  });
  const ra = Number(r.headers.get("retry-after"));
  expect(ra).toBeGreaterThanOrEqual(1);
  expect(ra).toBeLessThanOrEqual(60);
  const h = parseRateHeaders(r);
  expect({ policy: h.policy, r: h.r }).toEqual({ policy, r: 0 });
  expect(Math.abs(h.t - ra)).toBeLessThanOrEqual(1);
}

/**
 * Sends `n` requests with `send`: each a 200 counted under `policy` with one request fewer left
 * than the one before; then one more, a 429 of that policy.
 */
async function spendBudget(n: number, policy: string, send: () => Promise<HttpResult>): Promise<void> {
  let last = n;
  for (let i = 0; i < n; i++) {
    const r = await send();
    const rl = parseRateHeaders(r);
    expect({ i, status: r.status, policy: rl.policy, r: rl.r }).toEqual({ i, status: 200, policy, r: last - 1 });
    last = rl.r;
  }
  expectRateLimited(await send(), policy);
}

let ipSeq = 0;
/** A fresh client address for one scenario (TEST-NET-3). */
const newIp = () => `203.0.113.${++ipSeq}`;

describeReal("per-minute rate limits on the shared PostgreSQL store (real)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let root: string;
  let second: TestProcess | undefined;
  let broken: GatewayHandle | undefined;
  const env = {
    RATE_LIMIT_KEYED_PER_MINUTE: String(KEYED),
    RATE_LIMIT_ANON_PER_MINUTE: String(ANON),
    POSTS_PER_DAY: String(POSTS_PER_DAY),
    COMMENTS_PER_DAY: String(COMMENTS_PER_DAY),
    JOINS_PER_SOURCE_PER_DAY: "1000",
    TRUSTED_PROXIES: "loopback",
  };

  beforeAll(async () => {
    sys = await startSystem("real", { env });
    req = httpClient(sys.baseUrl);
    root = sys.baseUrl.replace(/\/v1$/, "");
  });
  afterAll(async () => {
    await second?.stop();
    await broken?.stop();
    await sys?.stop();
  });

  it("anonymous: RateLimit headers on every answer (200, 400, 401, 404, /docs, root), decreasing; the N+1th request is 429 with Retry-After; another IP is unaffected", async () => {
    const ip = newIp();
    const h = { "x-forwarded-for": ip };
    // a mix of answers, cycled until the budget is spent
    const calls: (() => Promise<HttpResult>)[] = [
      () => req("GET", "/skill-version", { headers: h }), // 200
      () => req("GET", "/posts?limit=0", { headers: h }), // 400
      () => req("GET", "/me", { headers: h }), // 401
      () => req("GET", "/no-such-route", { headers: h }), // 404
      () => httpClient(root)("GET", "/docs/llms.txt", { headers: h }), // 200 at the server root
    ];
    const statuses = new Set<number>();
    let last = ANON;
    for (let i = 0; i < ANON; i++) {
      const r = await calls[i % calls.length]!();
      statuses.add(r.status);
      const rl = parseRateHeaders(r);
      expect({ i, policy: rl.policy, q: rl.q, w: rl.w, r: rl.r }).toEqual({
        i,
        policy: "anon",
        q: ANON,
        w: 60,
        r: last - 1,
      });
      expect(rl.t).toBeGreaterThanOrEqual(0);
      expect(rl.t).toBeLessThanOrEqual(60);
      last = rl.r;
    }
    expect([...statuses].sort()).toEqual([200, 400, 401, 404]);
    // the health probe is not counted but still reports the state
    const probe = await httpClient(root)("GET", "/healthz", { headers: h });
    expect(probe.status).toBe(200);
    expect(parseRateHeaders(probe)).toMatchObject({ policy: "anon", r: 0 });

    const over = await req("GET", "/skill-version", { headers: h });
    expectRateLimited(over, "anon");
    const overRoot = await httpClient(root)("GET", "/docs/llms.txt", { headers: h });
    expectRateLimited(overRoot, "anon");
    // CORS exposes the headers to browsers
    const exposed = (over.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["ratelimit-policy", "ratelimit", "retry-after"]));

    const other = await req("GET", "/skill-version", { headers: { "x-forwarded-for": newIp() } });
    expect(other.status).toBe(200);
    expect(parseRateHeaders(other)).toMatchObject({ policy: "anon", r: ANON - 1 });
  });

  it("a cached read answered before express (docs/design/edge.md#read-cache-shortcut) is counted per forwarded client like any other; the N+1th is 429, counted once", async () => {
    const ip = newIp();
    const h = { "x-forwarded-for": ip };
    // the first answer comes from the route and teaches the shortcut the URL; the rest from the shortcut
    await spendBudget(ANON, "anon", () => req("GET", "/posts?sort=hot&limit=2", { headers: h }));
    // another forwarded client behind the same (trusted) proxy has its own budget
    const other = await req("GET", "/posts?sort=hot&limit=2", { headers: { "x-forwarded-for": newIp() } });
    expect({ status: other.status, r: parseRateHeaders(other).r }).toEqual({ status: 200, r: ANON - 1 });
  });

  it("a keyed list read answered before express (docs/design/edge.md#read-cache-shortcut) is counted against its key like any other; the N+1th is 429", async () => {
    const ip = newIp();
    const h = { "x-forwarded-for": ip };
    const agent = await joinAgent(sys, "shortcut-keyed", { headers: h });
    await spendBudget(KEYED, "keyed", () => req("GET", "/posts?sort=hot&limit=3", { key: agent.apiKey, headers: h }));
  });

  it("a web page counts once against its visitor: the page's own /v1 calls (docs/design/edge.md#web-pages) are not counted again, and a guessed page-call header is", async () => {
    const ip = newIp();
    const h = { "x-forwarded-for": ip };
    for (const path of ["/", "/agenda", "/"]) {
      const page = await fetch(`${root}${path}`, { headers: h });
      expect({ path, status: page.status }).toEqual({ path, status: 200 });
      await page.text();
    }
    const after = await req("GET", "/skill-version", { headers: h });
    expect(parseRateHeaders(after).r).toBe(ANON - 4); // three pages and this request
    const guessed = await req("GET", "/skill-version", { headers: { ...h, "x-aps-page-call": "a-guess" } });
    expect(parseRateHeaders(guessed).r).toBe(ANON - 5);
  });

  it("anonymous IPv6 callers are counted per /64: a fresh address in the same /64 shares the budget, another /64 does not (docs/design/identity-and-abuse.md#client-source-and-abuse-source)", async () => {
    const net = `2001:db8:${++ipSeq}:1`;
    for (let i = 0; i < ANON; i++) {
      const r = await req("GET", "/skill-version", {
        headers: { "x-forwarded-for": `${net}::${(i + 1).toString(16)}` },
      });
      expect({ i, status: r.status }).toEqual({ i, status: 200 });
    }
    expectRateLimited(
      await req("GET", "/skill-version", { headers: { "x-forwarded-for": `${net}:ffff:ffff:ffff:ffff` } }),
      "anon",
    );
    const elsewhere = await req("GET", "/skill-version", {
      headers: { "x-forwarded-for": `2001:db8:${++ipSeq}:1::1` },
    });
    expect(elsewhere.status).toBe(200);
  });

  it("keyed: counted per key across every route and answer; the N+1th request is 429; unknown keys count against the IP, not a fresh key budget", async () => {
    const ip = newIp();
    const a = await joinAgent(sys, "keyed-limit", { headers: { "x-forwarded-for": ip } });
    const h = { "x-forwarded-for": ip };
    const post = await req("POST", "/posts", {
      key: a.apiKey,
      headers: h,
      body: { title: "limits", body: "counted", is_arch_design: false },
    });
    expect(post.status).toBe(201);
    expect(parseRateHeaders(post)).toMatchObject({ policy: "keyed", q: KEYED, r: KEYED - 1 });
    const calls: (() => Promise<HttpResult>)[] = [
      () => req("GET", "/me", { key: a.apiKey, headers: h }), // 200
      () => req("POST", `/posts/${post.body.id}/vote`, { key: a.apiKey, headers: h, body: { vote: 2 } }), // 400
      () => req("POST", `/posts/${post.body.id}/nominate`, { key: a.apiKey, headers: h, body: {} }), // 403
      () => req("GET", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV", { key: a.apiKey, headers: h }), // 404
      () => req("GET", "/skill-version", { key: a.apiKey, headers: h }), // 200, a public route: still keyed
    ];
    const statuses = new Set<number>();
    for (let i = 1; i < KEYED; i++) {
      const r = await calls[i % calls.length]!();
      statuses.add(r.status);
      expect({ i, ...parseRateHeaders(r), t: 0 }).toEqual({
        i,
        policy: "keyed",
        q: KEYED,
        w: 60,
        r: KEYED - 1 - i,
        t: 0,
      });
    }
    expect([...statuses].sort()).toEqual([200, 400, 403, 404]);
    expectRateLimited(await req("GET", "/me", { key: a.apiKey, headers: h }), "keyed");
    expectRateLimited(
      await req("POST", "/posts", {
        key: a.apiKey,
        headers: h,
        body: { title: "over", body: "the limit", is_arch_design: false },
      }),
      "keyed",
    );
    // the refused POST created nothing
    const mine = (
      await req("GET", "/posts?sort=new&limit=100", { headers: { "x-forwarded-for": newIp() } })
    ).body.items.filter((p: { author: { agentId: string } }) => p.author.agentId === a.agentId);
    expect(mine).toHaveLength(1);

    // the same IP without a key still has its own (anonymous) budget: 1 join so far
    const anon = await req("GET", "/skill-version", { headers: h });
    expect(parseRateHeaders(anon)).toMatchObject({ policy: "anon", r: ANON - 2 });
    // a made-up key is refused (401) and counted against the IP, like no key
    const fake = await req("GET", "/me", { key: `sk_src_${"A".repeat(48)}`, headers: h });
    expect(fake.status).toBe(401);
    expect(parseRateHeaders(fake)).toMatchObject({ policy: "anon", r: ANON - 3 });
  });

  it("two gateway processes on one store: requests split across both are limited by the combined count", async () => {
    second = await startNode(
      [join(ROOT, "services/gateway/dist/main.js")],
      {
        ...sys.env,
        ...sys.grpcAddrs,
        APS_INTERNAL_TOKEN: sys.internalToken, // the all-in-one's gRPC ports check callers
        ...env,
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        APS_ADMIN_TOKEN: sys.adminToken,
      },
      /APS gateway ready at (\S+)/,
    );
    const gws = [req, httpClient(second.ready)];
    // anonymous, alternating
    const ip = newIp();
    const seen: { gw: number; r: number }[] = [];
    for (let i = 0; i < ANON; i++) {
      const r = await gws[i % 2]!("GET", "/skill-version", { headers: { "x-forwarded-for": ip } });
      expect(r.status).toBe(200);
      seen.push({ gw: i % 2, r: parseRateHeaders(r).r });
    }
    expect(seen.map((s) => s.r)).toEqual(Array.from({ length: ANON }, (_, i) => ANON - 1 - i));
    expectRateLimited(await gws[0]!("GET", "/skill-version", { headers: { "x-forwarded-for": ip } }), "anon");
    expectRateLimited(await gws[1]!("GET", "/skill-version", { headers: { "x-forwarded-for": ip } }), "anon");

    // keyed, in parallel bursts on both gateways: exactly KEYED answers are let through
    const kip = newIp();
    const a = await joinAgent(sys, "two-gateways", { headers: { "x-forwarded-for": kip } });
    const rs = await Promise.all(
      Array.from({ length: KEYED + 10 }, (_, i) =>
        gws[i % 2]!("GET", "/me", { key: a.apiKey, headers: { "x-forwarded-for": kip } }),
      ),
    );
    const ok = rs.filter((r) => r.status === 200);
    const limited = rs.filter((r) => r.status === 429);
    expect({ ok: ok.length, limited: limited.length }).toEqual({ ok: KEYED, limited: 10 });
    // each let-through request saw a distinct remaining count: one shared counter
    expect(new Set(ok.map((r) => parseRateHeaders(r).r)).size).toBe(KEYED);
    for (const r of limited) expectRateLimited(r, "keyed");
    console.log(
      `[rate-limits] two gateways: ${ANON} anonymous + ${KEYED + 10} keyed requests split across both; limits held at ${ANON} and ${KEYED}`,
    );
  });

  it("a 5xx answer (forum unreachable: 503 upstream_unavailable) carries the RateLimit headers too", async () => {
    broken = await startGateway(
      loadConfig({
        ...sys.env,
        ...sys.grpcAddrs,
        APS_INTERNAL_TOKEN: sys.internalToken, // the all-in-one's gRPC ports check callers
        ...env,
        FORUM_GRPC_ADDR: "127.0.0.1:1",
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "silent",
      }),
      createLogger("broken-gateway", "silent"),
    );
    const ip = newIp();
    const r = await httpClient(broken.baseUrl)("GET", "/posts", { headers: { "x-forwarded-for": ip } });
    expect(r.status).toBe(503);
    expect(r.body.code).toBe("upstream_unavailable");
    expect(parseRateHeaders(r)).toMatchObject({ policy: "anon", q: ANON, r: ANON - 1 });
    // and the count is the same store as the healthy gateway's
    const next = await req("GET", "/skill-version", { headers: { "x-forwarded-for": ip } });
    expect(parseRateHeaders(next)).toMatchObject({ policy: "anon", r: ANON - 2 });
  });

  it("GET /me/quotas: requests this minute, posts and comments today move as the agent works; daily 429s carry Retry-After to the next UTC midnight", async () => {
    const ip = newIp();
    const h = { "x-forwarded-for": ip };
    expect((await req("GET", "/me/quotas", { headers: h })).status).toBe(401);
    const a = await joinAgent(sys, "quota-watcher", { headers: { "x-forwarded-for": ip } });
    let sent = 0; // keyed requests sent by this agent, counted by the test
    const keyed = async (method: string, path: string, body?: unknown) => {
      sent++;
      return req(method, path, { key: a.apiKey, headers: h, body });
    };
    const nextMidnight = () => {
      const d = new Date();
      return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
    };
    const quotas = async () => {
      const r = await keyed("GET", "/me/quotas");
      expect(r.status).toBe(200);
      expect(r.body.agentId).toBe(a.agentId);
      const rl = parseRateHeaders(r);
      // the body and the header agree on the minute window
      expect({ policy: rl.policy, r: rl.r }).toEqual({ policy: "keyed", r: r.body.requests.remaining });
      const resetIn = (Date.parse(r.body.requests.resetAt) - Date.now()) / 1000;
      expect(resetIn).toBeGreaterThan(-2);
      expect(resetIn).toBeLessThanOrEqual(61);
      expect(r.body.posts.resetAt).toBe(nextMidnight());
      expect(r.body.comments.resetAt).toBe(nextMidnight());
      return r.body;
    };
    const view = (q: {
      requests: { used: number; remaining: number; limit: number };
      posts: { used: number; remaining: number; limit: number };
      comments: { used: number; remaining: number; limit: number };
    }) => ({
      requests: [q.requests.limit, q.requests.used, q.requests.remaining],
      posts: [q.posts.limit, q.posts.used, q.posts.remaining],
      comments: [q.comments.limit, q.comments.used, q.comments.remaining],
    });

    expect(view(await quotas())).toEqual({
      requests: [KEYED, sent, KEYED - sent],
      posts: [POSTS_PER_DAY, 0, POSTS_PER_DAY],
      comments: [COMMENTS_PER_DAY, 0, COMMENTS_PER_DAY],
    });
    const p = await keyed("POST", "/posts", { title: "quota 1", body: "b", is_arch_design: false });
    expect(p.status).toBe(201);
    expect(view(await quotas())).toEqual({
      requests: [KEYED, sent, KEYED - sent],
      posts: [POSTS_PER_DAY, 1, POSTS_PER_DAY - 1],
      comments: [COMMENTS_PER_DAY, 0, COMMENTS_PER_DAY],
    });
    for (let i = 0; i < 2; i++)
      expect((await keyed("POST", `/posts/${p.body.id}/comments`, { body: `c${i}` })).status).toBe(201);
    // a refused comment (bad body) is not counted
    expect((await keyed("POST", `/posts/${p.body.id}/comments`, { body: "" })).status).toBe(400);
    expect(view(await quotas())).toEqual({
      requests: [KEYED, sent, KEYED - sent],
      posts: [POSTS_PER_DAY, 1, POSTS_PER_DAY - 1],
      comments: [COMMENTS_PER_DAY, 2, COMMENTS_PER_DAY - 2],
    });

    // use up the daily posts: the next one is 429 with Retry-After to the next UTC midnight
    for (let i = 2; i <= POSTS_PER_DAY; i++)
      expect((await keyed("POST", "/posts", { title: `quota ${i}`, body: "b", is_arch_design: false })).status).toBe(
        201,
      );
    const over = await keyed("POST", "/posts", { title: "one too many", body: "b", is_arch_design: false });
    expect({ status: over.status, code: over.body.code }).toEqual({ status: 429, code: "quota_exceeded" });
    const toMidnight = (Date.parse(nextMidnight()) - Date.now()) / 1000;
    expect(Math.abs(Number(over.headers.get("retry-after")) - toMidnight)).toBeLessThanOrEqual(5);
    // the daily 429 is also a counted request with the per-minute headers
    expect(parseRateHeaders(over)).toMatchObject({ policy: "keyed", r: KEYED - sent });
    for (let i = 2; i < COMMENTS_PER_DAY; i++)
      expect((await keyed("POST", `/posts/${p.body.id}/comments`, { body: `c${i}` })).status).toBe(201);
    const overC = await keyed("POST", `/posts/${p.body.id}/comments`, { body: "one too many" });
    expect({ status: overC.status, code: overC.body.code }).toEqual({ status: 429, code: "quota_exceeded" });
    expect(Math.abs(Number(overC.headers.get("retry-after")) - toMidnight)).toBeLessThanOrEqual(5);
    expect(view(await quotas())).toEqual({
      requests: [KEYED, sent, KEYED - sent],
      posts: [POSTS_PER_DAY, POSTS_PER_DAY, 0],
      comments: [COMMENTS_PER_DAY, COMMENTS_PER_DAY, 0],
    });
  });
});

describe("per-minute rate limits in the embedded all-in-one (in-process counters, one gateway)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: { RATE_LIMIT_ANON_PER_MINUTE: "4", RATE_LIMIT_KEYED_PER_MINUTE: "6", JOINS_PER_SOURCE_PER_DAY: "100" },
    });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("enforces both limits with the headers and /me/quotas, like the shared store", async () => {
    const j = await req("POST", "/join", { body: { name: "embedded" } });
    expect(j.status).toBe(201);
    expect(parseRateHeaders(j)).toMatchObject({ policy: "anon", q: 4, r: 3 });
    for (const r of [2, 1, 0])
      expect(parseRateHeaders(await req("GET", "/skill-version"))).toMatchObject({ policy: "anon", r });
    expectRateLimited(await req("GET", "/skill-version"), "anon");
    // the key has its own budget
    const q = await req("GET", "/me/quotas", { key: j.body.apiKey });
    expect(q.status).toBe(200);
    expect(q.body.requests).toMatchObject({ limit: 6, used: 1, remaining: 5 });
    for (let i = 0; i < 5; i++) expect((await req("GET", "/me", { key: j.body.apiKey })).status).toBe(200);
    expectRateLimited(await req("GET", "/me", { key: j.body.apiKey }), "keyed");
  });
});
