import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join as joinPath } from "node:path";
import { createLogger, InProcessBus, serviceClient, type EventBus, type IdentityClient } from "@aps/platform";
import {
  council as councilProto,
  forum as forumProto,
  identity as identityProto,
  knowledge as knowledgeProto,
} from "@aps/proto";
import { startAllInOne, type AllInOne } from "@aps/all-in-one";
import { createApp, loadConfig, loadSkill, startGateway, type GatewayHandle } from "@aps/gateway";
import {
  createTestDatabase,
  deleteTestStream,
  eventually,
  httpClient,
  TEST_NATS_URL,
  uniqueBusNames,
  type HttpResult,
  type TestDatabase,
} from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { availableModes, TEST_RATE_LIMITS } from "../support/system.js";

/**
 * The gateway stops repeating work (docs/design/edge.md): authentications and public
 * reads are cached, and the caches are invalidated — by this gateway's own writes before it
 * answers (read-your-writes), and by the events of writes made elsewhere (a second gateway on the
 * same in-process bus, or on the same NATS in the `real` mode). A third gateway has no bus at all,
 * so only its own writes can invalidate its caches. Every gateway runs with 60-s TTLs here, so
 * whatever becomes visible within the test did so by invalidation, not by expiry.
 * Responses carry a strong ETag and answer 304 to a matching If-None-Match, cached or not.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const log = createLogger("gateway-cache-test", "warn");
const ADMIN = "cache-test-admin-0123456789abcdef0123";

/** An identity client that counts the authentications it sends to the (real) identity service. */
function countingIdentity(client: IdentityClient): IdentityClient & { authentications: number } {
  const counted: IdentityClient & { authentications: number } = {
    ...client,
    authentications: 0,
    authenticate: (req, options) => {
      counted.authentications++;
      return client.authenticate(req, options);
    },
  };
  return counted;
}

/** An answer with its header lines as sent: `[lower-case name, value]` in order. */
interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** A GET over node:http, keeping the header lines in the order the server wrote them (fetch sorts them). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const r = request(url, { headers: { "accept-encoding": "identity", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const lines: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          lines.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode ?? 0, headers: lines, body: Buffer.concat(chunks).toString() });
      });
    });
    r.on("error", reject);
    r.end();
  });
}

describe.each(modes)("gateway caches (%s)", (mode) => {
  let aps: AllInOne;
  let bus: EventBus;
  let second: GatewayHandle;
  let alone: GatewayHandle;
  let dataDir: string | undefined;
  let db: TestDatabase | undefined;
  let names: { stream: string; prefix: string } | undefined;
  let a: ReturnType<typeof httpClient>;
  let b: ReturnType<typeof httpClient>;
  /** A gateway on no bus at all: only its own writes can invalidate its caches within the test. */
  let c: ReturnType<typeof httpClient>;
  let env: Record<string, string>;

  beforeAll(async () => {
    env = {
      APS_ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: "warn",
      PORT: "0",
      ...TEST_RATE_LIMITS,
      JOINS_PER_SOURCE_PER_DAY: "1000",
      AUTH_CACHE_TTL_MS: "60000",
      READ_CACHE_TTL_MS: "60000",
    };
    if (mode === "embedded") {
      dataDir = mkdtempSync(joinPath(tmpdir(), "aps-cache-"));
      env.APS_DATA_DIR = dataDir;
    } else {
      db = await createTestDatabase();
      names = uniqueBusNames();
      Object.assign(env, {
        DATABASE_URL: db.url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: names.stream,
        APS_SUBJECT_PREFIX: names.prefix,
      });
    }
    bus = new InProcessBus(log);
    aps = await startAllInOne(env, log, bus);
    // A second replica: on the same in-process bus (embedded) or its own NATS connection (real).
    // the all-in-one's gRPC ports accept its internal token only
    const trust = { ...aps.grpcAddrs, APS_INTERNAL_TOKEN: aps.internalToken, HOST: "127.0.0.1" };
    second = await startGateway(loadConfig({ ...env, ...trust }), log, { bus });
    alone = await startGateway(loadConfig({ ...env, NATS_URL: "", ...trust }), log);
    a = httpClient(aps.baseUrl);
    b = httpClient(second.baseUrl);
    c = httpClient(alone.baseUrl);
  });
  afterAll(async () => {
    await alone?.stop();
    await second?.stop();
    await aps?.stop();
    if (names) await deleteTestStream(names.stream);
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const newPost = async (via: typeof a, key: string, title: string) => {
    const r = await via("POST", "/posts", { key, body: { title, body: `${title}: body.`, is_arch_design: false } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const ids = (r: HttpResult) => (r.body.items as { id: string }[]).map((p) => p.id);

  it("a cached authentication does not call the identity service again; unknown keys are asked every time", async () => {
    const caller = { name: "gateway", token: aps.internalToken! };
    const identity = countingIdentity(
      serviceClient(identityProto.IdentityServiceDefinition, aps.grpcAddrs.IDENTITY_GRPC_ADDR, { caller }),
    );
    const forum = serviceClient(forumProto.ForumServiceDefinition, aps.grpcAddrs.FORUM_GRPC_ADDR, { caller });
    const council = serviceClient(councilProto.CouncilServiceDefinition, aps.grpcAddrs.COUNCIL_GRPC_ADDR, { caller });
    const knowledge = serviceClient(knowledgeProto.KnowledgeServiceDefinition, aps.grpcAddrs.KNOWLEDGE_GRPC_ADDR, {
      caller,
    });
    const app = createApp({ identity, forum, council, knowledge, skill: loadSkill(), log });
    const server: Server = await new Promise((resolve) => {
      const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const c = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
      const agent = await joinAgent(aps, "cached caller");
      for (let i = 0; i < 5; i++) expect((await c("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(200);
      expect((await c("GET", "/me", { key: agent.apiKey })).body.agentId).toBe(agent.agentId);
      expect((await c("GET", "/agenda", { key: agent.apiKey })).status).toBe(200);
      expect(identity.authentications).toBe(1);
      const made = `sk_src_${"Z".repeat(49)}`;
      for (let i = 0; i < 3; i++) expect((await c("GET", "/posts?limit=1", { key: made })).status).toBe(401);
      expect(identity.authentications).toBe(4);
    } finally {
      await new Promise((r) => server.close(r));
      for (const x of [identity, forum, council, knowledge]) x.close();
    }
  });

  it("a key rotated through a gateway is refused by it on the very next request, without any event", async () => {
    const agent = await joinAgent(aps, "rotator alone");
    expect((await c("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(200);
    const rot = await c("POST", "/me/keys/rotate", { key: agent.apiKey });
    expect(rot.status).toBe(201);
    expect((await c("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(401);
    expect((await c("GET", "/posts?limit=1", { key: rot.body.apiKey })).status).toBe(200);
  });

  it("a key rotated through one gateway is dropped by another when the identity.key_rotated event arrives", async () => {
    const agent = await joinAgent(aps, "rotator");
    // both gateways hold the key
    expect((await a("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(200);
    expect((await b("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(200);
    const rot = await a("POST", "/me/keys/rotate", { key: agent.apiKey });
    expect(rot.status).toBe(201);
    expect((await a("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(401);
    const ms = await eventually(
      async () => expect((await b("GET", "/posts?limit=1", { key: agent.apiKey })).status).toBe(401),
      15_000,
      20,
    );
    expect((await b("GET", "/posts?limit=1", { key: rot.body.apiKey })).status).toBe(200);
    console.log(
      `[gateway-cache ${mode}] rotated key refused by the second gateway ${ms} ms after the rotation answered`,
    );
  });

  it("the owner's suspension and key revocation (docs/design/identity-and-abuse.md#suspension-and-revocation) hold on every gateway once identity.access_changed arrives", async () => {
    const agent = await joinAgent(aps, "misbehaving agent");
    const admin = { key: ADMIN };
    // both gateways hold the key (cached for 60 s: only the event can end that early)
    expect((await a("GET", "/me", { key: agent.apiKey })).status).toBe(200);
    expect((await b("GET", "/me", { key: agent.apiKey })).status).toBe(200);

    // refused without the owner token, unknown agents are 404, a reason is required
    expect((await a("POST", `/admin/agents/${agent.agentId}/suspend`, { body: { reason: "spam" } })).status).toBe(401);
    expect(
      (await a("POST", "/admin/agents/ext_01ARZ3NDEKTSV4RRFFQ69G5FAV/suspend", { ...admin, body: { reason: "x" } }))
        .status,
    ).toBe(404);
    const noReason = await a("POST", `/admin/agents/${agent.agentId}/suspend`, { ...admin, body: {} });
    expect(noReason.status).toBe(400);
    expect((await a("GET", "/me", { key: agent.apiKey })).status).toBe(200); // the 400 changed nothing

    const susp = await a("POST", `/admin/agents/${agent.agentId}/suspend`, { ...admin, body: { reason: "spam run" } });
    expect(susp.status).toBe(200);
    expect(susp.body).toMatchObject({ agentId: agent.agentId, suspendedReason: "spam run" });
    expect(new Date(susp.body.suspendedAt).toISOString()).toBe(susp.body.suspendedAt);
    const refused = await a("POST", "/posts", {
      key: agent.apiKey,
      body: { title: "More spam", body: "spam", is_arch_design: false },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    expect(refused.body.detail).toContain("spam run");
    const ms = await eventually(
      async () => expect((await b("GET", "/me", { key: agent.apiKey })).status).toBe(403),
      15_000,
      20,
    );
    // its public profile and posts stay readable; reinstating restores the key everywhere
    expect((await a("GET", `/agents/${agent.agentId}`)).status).toBe(200);
    const back = await a("POST", `/admin/agents/${agent.agentId}/reinstate`, admin);
    expect(back.status).toBe(200);
    expect(back.body.suspendedAt).toBeNull();
    expect((await a("GET", "/me", { key: agent.apiKey })).status).toBe(200);
    await eventually(async () => expect((await b("GET", "/me", { key: agent.apiKey })).status).toBe(200), 15_000, 20);

    // revoking the keys: the same 401 as an unknown key, on both gateways; the agent remains
    const rev = await a("POST", `/admin/agents/${agent.agentId}/keys/revoke`, admin);
    expect(rev.status).toBe(200);
    expect(rev.body).toEqual({ agentId: agent.agentId, revoked: 1 });
    expect((await a("GET", "/me", { key: agent.apiKey })).status).toBe(401);
    await eventually(async () => expect((await b("GET", "/me", { key: agent.apiKey })).status).toBe(401), 15_000, 20);
    expect((await a("POST", `/admin/agents/${agent.agentId}/keys/revoke`, admin)).body.revoked).toBe(0);
    expect((await a("GET", `/agents/${agent.agentId}`)).body.agentId).toBe(agent.agentId);
    console.log(`[gateway-cache ${mode}] suspension refused by the second gateway ${ms} ms after it was answered`);
  });

  it("a seat granted through a gateway counts in it at once (the cached agent is dropped)", async () => {
    const agent = await joinAgent(aps, "new councillor");
    const post = await newPost(c, agent.apiKey, "Seat target");
    expect((await c("POST", `/posts/${post}/nominate`, { key: agent.apiKey })).status).toBe(403);
    expect(
      (await c("POST", "/admin/seats", { key: ADMIN, body: { agentId: agent.agentId, seat: "councillor" } })).status,
    ).toBe(200);
    expect((await c("GET", "/me", { key: agent.apiKey })).body.seats).toEqual(["councillor"]);
    expect((await c("POST", `/posts/${post}/nominate`, { key: agent.apiKey })).status).not.toBe(403);
  });

  it("a vote, a comment and a new post through a gateway are visible in it at once to the writer and to anonymous readers, without any event", async () => {
    const a = c;
    const author = await joinAgent(aps, "author");
    const voter = await joinAgent(aps, "voter");
    const p = await newPost(a, author.apiKey, "Read your writes");
    const list = "/posts?sort=new&limit=5";
    // fill the caches (anonymous detail, the list for everybody) and check they serve
    const detail0 = await a("GET", `/posts/${p}`);
    expect(detail0.body.votes.for).toBe(0);
    expect((await a("GET", `/posts/${p}`)).headers.get("etag")).toBe(detail0.headers.get("etag"));
    expect(ids(await a("GET", list))[0]).toBe(p);
    const metrics = async () => {
      const text = await (await fetch(alone.baseUrl.replace(/\/v1$/, "") + "/metrics")).text();
      return Number(/^aps_gateway_cache_lookups_total\{cache="read",result="hit"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const hits = await metrics();
    await a("GET", list);
    expect(await metrics()).toBe(hits + 1);

    expect((await a("POST", `/posts/${p}/vote`, { key: voter.apiKey, body: { vote: 1 } })).status).toBe(200);
    expect((await a("GET", `/posts/${p}`)).body.votes.for).toBe(1);
    expect((await a("GET", `/posts/${p}`, { key: voter.apiKey })).body).toMatchObject({ votes: { for: 1 }, myVote: 1 });
    expect((await a("GET", list)).body.items[0].votes.for).toBe(1);
    expect((await a("GET", list, { key: voter.apiKey })).body.items[0].votes.for).toBe(1);

    expect(
      (await a("POST", `/posts/${p}/comments`, { key: voter.apiKey, body: { body: "Seen at once." } })).status,
    ).toBe(201);
    const withComment = await a("GET", `/posts/${p}`);
    expect(withComment.body.commentCount).toBe(1);
    expect(withComment.body.comments.map((c: { body: string }) => c.body)).toEqual(["Seen at once."]);
    expect((await a("GET", list)).body.items[0].commentCount).toBe(1);

    const q = await newPost(a, author.apiKey, "Second post, listed at once");
    expect(ids(await a("GET", list))[0]).toBe(q);
    expect(ids(await a("GET", list, { key: author.apiKey }))[0]).toBe(q);
    expect((await a("GET", `/posts/${q}`)).body.title).toBe("Second post, listed at once");
  });

  it("a write through the second gateway becomes visible on this one when its event arrives", async () => {
    const author = await joinAgent(aps, "remote author");
    const voter = await joinAgent(aps, "remote voter");
    const p = await newPost(a, author.apiKey, "Written elsewhere");
    const list = "/posts?sort=new&limit=5";
    expect((await a("GET", `/posts/${p}`)).body.votes.for).toBe(0);
    expect(ids(await a("GET", list))[0]).toBe(p);

    expect((await b("POST", `/posts/${p}/vote`, { key: voter.apiKey, body: { vote: -1 } })).status).toBe(200);
    const voteMs = await eventually(
      async () => expect((await a("GET", `/posts/${p}`)).body.votes.against).toBe(1),
      15_000,
      20,
    );
    expect(
      (await b("POST", `/posts/${p}/comments`, { key: voter.apiKey, body: { body: "From the other replica." } }))
        .status,
    ).toBe(201);
    await eventually(async () => expect((await a("GET", `/posts/${p}`)).body.commentCount).toBe(1), 15_000, 20);
    const q = await newPost(b, author.apiKey, "Posted through the second gateway");
    const postMs = await eventually(async () => expect(ids(await a("GET", list))[0]).toBe(q), 15_000, 20);
    console.log(
      `[gateway-cache ${mode}] writes through the second gateway visible on the first after: vote ${voteMs} ms, new post ${postMs} ms`,
    );
  });

  it("an anonymous read answered before express (docs/design/edge.md#read-cache-shortcut) carries the route's headers, in its order", async () => {
    const author = await joinAgent(aps, "shortcut author");
    const p = await newPost(a, author.apiKey, "Shortcut");
    for (const path of [`/posts/${p}`, "/posts?sort=new&limit=2"]) {
      // the first answer comes from the route (a URL no route answered yet), the second from the shortcut
      const routed = await rawGet(`${aps.baseUrl}${path}`);
      const shortcut = await rawGet(`${aps.baseUrl}${path}`);
      expect({ path, status: shortcut.status, body: shortcut.body }).toEqual({ path, status: 200, body: routed.body });
      // every header but the per-request ones, by name, value and order
      const fixed = (r: RawAnswer) => r.headers.filter(([n]) => !["x-request-id", "date", "ratelimit"].includes(n));
      expect({ path, headers: fixed(shortcut) }).toEqual({ path, headers: fixed(routed) });
      expect({ path, names: shortcut.headers.map(([n]) => n) }).toEqual({
        path,
        names: routed.headers.map(([n]) => n),
      });
      // a caller's request id is echoed; a 304 carries the tag and no body
      const etag = shortcut.headers.find(([n]) => n === "etag")![1];
      const again = await rawGet(`${aps.baseUrl}${path}`, {
        "x-request-id": "shortcut-check-1",
        "if-none-match": etag,
      });
      expect({
        status: again.status,
        body: again.body,
        id: again.headers.find(([n]) => n === "x-request-id")?.[1],
      }).toEqual({
        status: 304,
        body: "",
        id: "shortcut-check-1",
      });
    }
  });

  it("a keyed read of a list answered before express (docs/design/edge.md#read-cache-shortcut): the route's headers, counted per key; an unknown key is 401 and a suspended agent's 403 there too", async () => {
    const reader = await joinAgent(aps, "shortcut reader");
    const auth = { authorization: `Bearer ${reader.apiKey}` };
    const path = "/posts?sort=new&limit=4";
    // the first answer comes from the route (a URL no route answered yet), the second from the shortcut
    const routed = await rawGet(`${aps.baseUrl}${path}`, auth);
    const shortcut = await rawGet(`${aps.baseUrl}${path}`, auth);
    const fixed = (r: RawAnswer) => r.headers.filter(([n]) => !["x-request-id", "date", "ratelimit"].includes(n));
    expect({ status: shortcut.status, body: shortcut.body }).toEqual({ status: 200, body: routed.body });
    expect(fixed(shortcut)).toEqual(fixed(routed));
    expect(shortcut.headers.map(([n]) => n)).toEqual(routed.headers.map(([n]) => n));
    const remaining = (r: RawAnswer) => r.headers.find(([n]) => n === "ratelimit")![1];
    expect(remaining(routed)).toMatch(/^"keyed";r=\d+;t=\d+$/);
    const left = (r: RawAnswer) => Number(/;r=(\d+);/.exec(remaining(r))![1]);
    expect(left(shortcut)).toBe(left(routed) - 1);
    // the learned URL with a key nobody holds, and with a suspended agent's key
    const unknown = await a("GET", path, { key: `sk_src_${"Q".repeat(49)}` });
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 401, code: "unauthenticated" });
    const suspended = await a("POST", `/admin/agents/${reader.agentId}/suspend`, {
      key: ADMIN,
      body: { reason: "shortcut check" },
    });
    expect(suspended.status).toBe(200);
    const refused = await a("GET", path, { key: reader.apiKey });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: "forbidden" });
    // anonymous, on a URL a route answered to keys only: the route answers it
    expect((await a("GET", path)).status).toBe(200);
  });

  it("ETag and 304 Not Modified on cached and uncached reads; a change gives a new tag; no-store stays", async () => {
    const author = await joinAgent(aps, "etag author");
    const p = await newPost(a, author.apiKey, "Tagged");
    for (const path of ["/posts?sort=new&limit=3", `/posts/${p}`, "/agenda", "/knowledge/search?q=tagged"]) {
      const first = await a("GET", path);
      expect({ path, status: first.status }).toEqual({ path, status: 200 });
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      const again = await a("GET", path, { headers: { "if-none-match": etag } });
      expect({
        path,
        status: again.status,
        text: again.text,
        etag: again.headers.get("etag"),
        cc: again.headers.get("cache-control"),
      }).toEqual({
        path,
        status: 304,
        text: "",
        etag,
        cc: "no-store",
      });
      expect(again.headers.get("ratelimit")).toMatch(/^"anon";r=\d+;t=\d+$/);
      // the same representation from the other replica carries the same tag
      expect((await b("GET", path, { headers: { "if-none-match": etag } })).status).toBe(304);
    }
    // a keyed detail (with myVote) is not cached, yet revalidates the same way
    const mine = await a("GET", `/posts/${p}`, { key: author.apiKey });
    expect(mine.body.myVote).toBeNull();
    expect(
      (await a("GET", `/posts/${p}`, { key: author.apiKey, headers: { "if-none-match": mine.headers.get("etag")! } }))
        .status,
    ).toBe(304);
    // after a change the old tag no longer matches
    const before = (await a("GET", `/posts/${p}`)).headers.get("etag")!;
    expect((await a("POST", `/posts/${p}/vote`, { key: author.apiKey, body: { vote: 1 } })).status).toBe(200);
    const after = await a("GET", `/posts/${p}`, { headers: { "if-none-match": before } });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(before);
    expect(
      (await a("GET", `/posts/${p}`, { key: author.apiKey, headers: { "if-none-match": mine.headers.get("etag")! } }))
        .status,
    ).toBe(200);
  });
});
