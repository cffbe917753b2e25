import { httpClient } from "@aps/testkit";
import { expectProblem, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * Reserved words (docs/design/edge.md#validation), MCP at /mcp (docs/design/agents.md#untrusted-content) and
 * the gateway half of "admin routes off the public Ingress" (docs/design/operations.md#chart-defaults-against-abuse), on the
 * all-in-one (gateway rules; no other topology adds coverage):
 * - a status or kind name (`adopted`, `open`, `arch`, `post`…) or `docs` is refused as a tag on
 *   create and on edit with a 400 naming the word, and nothing is stored;
 * - an event cursor that was never issued (beyond the newest event, or malformed) is a 400 on
 *   `/v1/events` and on `/v1/events/stream`;
 * - `/mcp` and `/mcp/public` refuse a browser `Origin` that is not allowed (403 problem+json) and serve a client
 *   without `Origin` and one from the service's own origin;
 * - the admin routes answer only their exact, lowercase path (`/V1/ADMIN/…` is not routed past an
 *   Ingress exclusion of `/v1/admin`).
 */
const TIMEOUT_MS = 120_000;

describe("reserved words, never-issued cursors, the MCP Origin (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let author: JoinedAgent;
  let origin: string;

  beforeAll(async () => {
    sys = await startSystem("embedded", { env: { JOINS_PER_SOURCE_PER_DAY: "1000", POSTS_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
    origin = new URL(sys.baseUrl).origin;
    author = await joinAgent(sys, "tagger");
  }, TIMEOUT_MS);
  afterAll(async () => {
    await sys?.stop();
  });

  const myPosts = async () =>
    ((await req("GET", `/posts?author=${author.agentId}&sort=new&limit=100`)).body.items as { id: string }[]).map(
      (p) => p.id,
    );

  it("refuses a status or kind name, or docs, as a tag on create, naming it, and stores nothing", async () => {
    for (const word of ["adopted", "rejected", "open", "agenda", "duplicate", "arch", "free", "post", "docs"]) {
      const r = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: `Tagged ${word}`, body: "Body.", is_arch_design: true, tags: ["storage", word] },
      });
      expectProblem(r, 400, "invalid_request", word);
      expect(r.body.detail).toContain(`"${word}" is reserved`);
    }
    expect(await myPosts()).toEqual([]);
  });

  it("refuses a reserved tag on edit: the post keeps its tags and has no new revision", async () => {
    const id = await propose(author, { title: "Honest tags", body: "Body.", tags: ["storage"] });
    for (const word of ["adopted", "docs"]) {
      const r = await req("PATCH", `/posts/${id}`, { key: author.apiKey, body: { tags: ["storage", word] } });
      expectProblem(r, 400, "invalid_request", word);
      expect(r.body.detail).toContain(`"${word}" is reserved`);
    }
    const post = (await req("GET", `/posts/${id}`)).body;
    expect(post.tags).toEqual(["storage"]);
    expect((await req("GET", `/posts/${id}/revisions`)).body.items).toHaveLength(1);
    // an ordinary tag still works
    const ok = await req("PATCH", `/posts/${id}`, { key: author.apiKey, body: { tags: ["storage", "adoption"] } });
    expect([ok.status, ok.body.tags]).toEqual([200, ["adoption", "storage"]]);
  });

  it("answers 400 for an event cursor that was never issued: from the future, or malformed", async () => {
    const page = await req("GET", "/events?limit=100");
    expect(page.status).toBe(200);
    let newest = page.body.nextCursor as string;
    for (;;) {
      const more = await req("GET", `/events?limit=100&after=${newest}`);
      expect(more.status).toBe(200);
      if (more.body.nextCursor === newest) break;
      newest = more.body.nextCursor;
    }
    // the newest cursor issued is fine (an empty page until something happens)
    expect((await req("GET", `/events?after=${newest}`)).status).toBe(200);
    expect((await req("GET", "/events?after=0")).status).toBe(200);
    for (const after of [String(BigInt(newest) + 1000n), "999999999999999999", "abc", "-1", "1e3", "1.5"])
      expectProblem(await req("GET", `/events?after=${encodeURIComponent(after)}`), 400, "invalid_cursor", after);
    const future = String(BigInt(newest) + 1000n);
    expectProblem(await req("GET", `/events/stream?after=${future}`), 400, "invalid_cursor", "stream after");
    expectProblem(
      await req("GET", "/events/stream", { headers: { "last-event-id": future } }),
      400,
      "invalid_cursor",
      "stream Last-Event-ID",
    );
  });

  /** An MCP `initialize` POST to `path` (/mcp, or /mcp/public for anonymous readers) with `headers`. */
  const initialize = (headers: Record<string, string> = {}, path = "/mcp") =>
    fetch(`${origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "origin-test", version: "1" } },
      }),
    });

  it("/mcp: a browser Origin that is not allowed gets 403 problem+json; no Origin and the own origin work", async () => {
    for (const path of ["/mcp", "/mcp/public"])
      for (const bad of ["https://evil.example", "null", `${origin}.evil.example`, origin.replace("http:", "https:")]) {
        // before anything else, the 401 of /mcp without credentials included
        const r = await initialize({ origin: bad }, path);
        expect([path, bad, r.status]).toEqual([path, bad, 403]);
        expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(((await r.json()) as { code: string }).code).toBe("forbidden");
      }
    for (const headers of [{}, { origin }] as Record<string, string>[]) {
      // anonymous: /mcp/public serves, /mcp asks for a bearer (OAuth discovery, docs/design/agents.md#oauth-for-mcp)
      const r = await initialize(headers, "/mcp/public");
      expect([headers, r.status]).toEqual([headers, 200]);
      expect(((await r.json()) as { result: { serverInfo: unknown } }).result.serverInfo).toBeDefined();
      const closed = await initialize(headers);
      expect([headers, closed.status]).toEqual([headers, 401]);
      expect(closed.headers.get("www-authenticate")).toMatch(/^Bearer .*resource_metadata="/);
    }
  });

  it("the admin routes answer only their exact lowercase path", async () => {
    const admin = { authorization: `Bearer ${sys.adminToken}` };
    expect((await fetch(`${origin}/v1/admin/events/dlq`, { headers: admin })).status).not.toBe(404);
    for (const path of ["/V1/ADMIN/events/dlq", "/v1/Admin/events/dlq", "/V1/admin/events/dlq"])
      expect([path, (await fetch(`${origin}${path}`, { headers: admin })).status]).toEqual([path, 404]);
  });
});
