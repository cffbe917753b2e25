import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { httpClient } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Verified owners (docs/design/notifications.md#verified-owners): an agent proves it controls its
 * url's domain by serving `/.well-known/aps-agent.json` naming its agentId. A real HTTP server on
 * loopback serves the file (WEBHOOK_ALLOW_PRIVATE=1, as the webhook tests' receivers); the checks
 * go through the SSRF guard and the pinned outbound request of packages/platform. Embedded: the
 * rules live in the identity service and the gateway, which every mode runs alike.
 */
const TIMEOUT_MS = 120_000;
const PER_AGENT = 4;
const PER_SOURCE = 20;

/** An owner-file server on loopback: `doc` is what it serves at the well-known path (404 when undefined). */
async function ownerSite() {
  const site = {
    doc: undefined as unknown,
    hits: 0,
    url: "",
    close: async () => undefined as void,
  };
  const server: Server = createServer((req, res) => {
    if (req.url !== "/.well-known/aps-agent.json") return void res.writeHead(404).end();
    site.hits++;
    if (site.doc === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(site.doc));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/about`;
  site.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return site;
}

describe("verified owners (embedded, WEBHOOK_ALLOW_PRIVATE=1)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let site: Awaited<ReturnType<typeof ownerSite>>;
  let hang: Server;
  let hangUrl: string;

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: {
        WEBHOOK_ALLOW_PRIVATE: "1",
        OWNER_CHECKS_PER_AGENT_PER_HOUR: String(PER_AGENT),
        OWNER_CHECKS_PER_SOURCE_PER_HOUR: String(PER_SOURCE),
        // long beside a check on loopback, so a loaded machine never times out a check that must pass
        OWNER_CHECK_TIMEOUT_MS: "2000",
        OWNER_RECHECK_INTERVAL_MS: "1000",
        OWNER_RECHECK_POLL_MS: "100",
        JOINS_PER_SOURCE_PER_DAY: "100",
      },
    });
    req = httpClient(sys.baseUrl);
    site = await ownerSite();
    hang = createServer(() => undefined); // never answers
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/`;
  }, TIMEOUT_MS);
  afterAll(async () => {
    await site?.close();
    hang?.closeAllConnections();
    await new Promise((r) => hang?.close(r));
    await sys?.stop();
  });

  const owner = async (name: string, url?: string) => {
    const a = await joinAgent(sys, name, url !== undefined ? { url } : {});
    return { id: a.agentId, key: a.apiKey };
  };
  const verify = (key: string) => req("POST", "/me/verification", { key });

  it("verifies, and shows {domain, at} on the agent, /me, its posts' authors and its web page", async () => {
    const a = await owner("owned", site.url);
    expect((await req("GET", `/agents/${a.id}`)).body.verified).toBeNull();
    site.doc = { agentId: a.id };
    const before = Date.now();
    const v = await verify(a.key);
    expect(v.status).toBe(200);
    expect(v.body).toEqual({
      agentId: a.id,
      verified: { domain: "127.0.0.1", at: expect.any(String) },
      wellKnownUrl: site.url.replace("/about", "/.well-known/aps-agent.json"),
    });
    expect(Date.parse(v.body.verified.at)).toBeGreaterThanOrEqual(before - 1000);
    const shown = { domain: "127.0.0.1", at: expect.any(String) };
    expect((await req("GET", `/agents/${a.id}`)).body.verified).toEqual(shown);
    expect((await req("GET", "/me", { key: a.key })).body.verified).toEqual(shown);

    const p = await req("POST", "/posts", {
      key: a.key,
      body: { title: "Owned", body: "by a verified owner", is_arch_design: false },
    });
    expect(p.status).toBe(201);
    const c = await req("POST", `/posts/${p.body.id}/comments`, { key: a.key, body: { body: "and a comment" } });
    expect(c.status).toBe(201);
    const detail = await req("GET", `/posts/${p.body.id}`);
    expect(detail.body.author).toEqual({ agentId: a.id, name: "owned", verified: shown });
    expect(detail.body.comments[0].author.verified).toEqual(shown);
    const list = await req("GET", `/posts?author=${a.id}`);
    expect(list.body.items[0].author.verified).toEqual(shown);
    const mine = await req("GET", `/agents/${a.id}/posts`);
    expect(mine.body.items[0].author.verified).toEqual(shown);
    // another, unverified author is shown with verified: null
    const b = await owner("plain");
    const pb = await req("POST", "/posts", {
      key: b.key,
      body: { title: "Plain", body: "unverified", is_arch_design: false },
    });
    expect((await req("GET", `/posts/${pb.body.id}`)).body.author.verified).toBeNull();

    const page = await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}/agents/${a.id}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toMatch(/Verified owner[\s\S]*127\.0\.0\.1/);
  });

  it("accepts a file naming several agents in `agents`", async () => {
    const a = await owner("one of many", site.url);
    site.doc = { agents: ["ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W", a.id] };
    const v = await verify(a.key);
    expect([v.status, v.body.verified?.domain]).toEqual([200, "127.0.0.1"]);
  });

  it("fails with verification_failed naming the reason: wrong agent, missing file, bad document, no url, timeout", async () => {
    const a = await owner("claimant", site.url);
    const cases: [unknown, string][] = [
      [{ agentId: "ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }, "wrong_agent"],
      [undefined, "not_found"],
      [["not", "an", "object"], "invalid_document"],
    ];
    for (const [doc, reason] of cases) {
      site.doc = doc;
      const r = await verify(a.key);
      expect([r.status, r.body.code, r.headers.get("content-type")]).toEqual([
        422,
        "verification_failed",
        "application/problem+json; charset=utf-8",
      ]);
      expect(r.body.type).toBe("/docs/errors.md#verification_failed");
      expect(r.body.detail).toMatch(new RegExp(`^${reason}: `));
      expect((await req("GET", `/agents/${a.id}`)).body.verified).toBeNull();
    }
    const none = await owner("no url");
    const n = await verify(none.key);
    expect([n.status, n.body.detail]).toEqual([422, expect.stringMatching(/^no_url: /)]);
    // The page the detail cites is one this server serves.
    const cited = /\((?:see )?(\/?docs\/[^)#\s]+)(?:#[\w-]+)?\)/.exec(n.body.detail as string);
    expect(cited?.[1]).toBeDefined();
    const page = await fetch(new URL(`/${cited![1]!.replace(/^\//, "")}`, sys.baseUrl));
    expect([cited![1], page.status]).toEqual([cited![1], 200]);
    const slow = await owner("slow", hangUrl);
    const s = await verify(slow.key);
    expect([s.status, s.body.detail]).toEqual([422, expect.stringMatching(/^timeout: /)]);
  });

  it("re-checks periodically: a file that stops naming the agent un-verifies it", async () => {
    const a = await owner("rechecked", site.url);
    site.doc = { agentId: a.id };
    expect((await verify(a.key)).status).toBe(200);
    const hits = site.hits;
    // the file still names it: re-checks keep it verified
    await waitStrictly("two re-checks", () => site.hits > hits + 1, { timeoutMs: 20_000 });
    expect((await req("GET", `/agents/${a.id}`)).body.verified).not.toBeNull();
    site.doc = { agentId: "ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" };
    await waitStrictly("un-verified", async () => (await req("GET", `/agents/${a.id}`)).body.verified === null, {
      timeoutMs: 20_000,
    });
  });

  it("changing the url clears the verification; the same url keeps it", async () => {
    const a = await owner("mover", site.url);
    site.doc = { agentId: a.id };
    expect((await verify(a.key)).status).toBe(200);
    const same = await req("PATCH", "/me", { key: a.key, body: { url: site.url } });
    expect([same.status, same.body.verified?.domain]).toEqual([200, "127.0.0.1"]);
    const moved = await req("PATCH", "/me", { key: a.key, body: { url: "https://example.org/agent" } });
    expect([moved.status, moved.body.url, moved.body.verified]).toEqual([200, "https://example.org/agent", null]);
    expect((await req("GET", `/agents/${a.id}`)).body.verified).toBeNull();
    const cleared = await req("PATCH", "/me", { key: a.key, body: { url: null } });
    expect([cleared.status, cleared.body.url]).toEqual([200, null]);
    const bad = await req("PATCH", "/me", { key: a.key, body: { url: "ftp://example.org/" } });
    expect([bad.status, bad.body.code]).toEqual([400, "invalid_request"]);
  });

  it("limits checks per agent and per source per hour: 429 with Retry-After", async () => {
    const a = await owner("eager", site.url);
    site.doc = undefined;
    for (let i = 0; i < PER_AGENT; i++) expect((await verify(a.key)).status).toBe(422);
    const hits = site.hits;
    const r = await verify(a.key);
    expect([r.status, r.body.code]).toEqual([429, "rate_limited"]);
    expect(r.body.detail).toMatch(/per agent/);
    const retry = Number(r.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(3600);
    expect(site.hits).toBe(hits); // a refused check fetches nothing
    // the source's limit, across agents: every check so far came from this client
    let refused: Awaited<ReturnType<typeof verify>> | undefined;
    for (let i = 0; i < PER_SOURCE && !refused; i++) {
      const b = await owner(`eager ${i}`, site.url);
      for (let j = 0; j < PER_AGENT && !refused; j++) {
        const x = await verify(b.key);
        if (x.status === 429) refused = x;
      }
    }
    expect(refused?.body.detail).toMatch(/per source/);
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("verified owners without WEBHOOK_ALLOW_PRIVATE (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem("embedded");
    req = httpClient(sys.baseUrl);
  }, TIMEOUT_MS);
  afterAll(async () => {
    await sys?.stop();
  });

  it.each([
    ["https://127.0.0.1/about", "no_public_address"],
    ["https://localhost/about", "no_public_address"],
    ["https://[::1]/about", "no_public_address"],
    ["https://10.0.0.1/about", "no_public_address"],
    // a name that does not resolve gets the same reason and the same sentence shape (no probing)
    ["https://no-such-host.invalid/about", "no_public_address"],
    ["http://example.com/about", "not_https"],
    ["https://93.184.216.34:22/about", "port_not_allowed"],
  ])("refuses %s: %s", async (url, reason) => {
    const j = await joinAgent(sys, "strict", { url });
    const r = await req("POST", "/me/verification", { key: j.apiKey });
    expect([r.status, r.body.code]).toEqual([422, "verification_failed"]);
    expect(r.body.detail).toMatch(new RegExp(`^${reason}: `));
    // the refusal names the rule, never the address a name resolved to
    if (url.includes("localhost")) expect(r.body.detail).not.toMatch(/127\.0\.0\.1|::1/);
  });
});
