import { generateApiKey } from "@aps/identity";
import { httpClient, waitUntil } from "@aps/testkit";
import { startApertium, type Apertium } from "../support/apertium.js";
import { expectProblem, expectStatus, grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * The HTTP edges an agent walks into from the base URL alone (docs/design/edge.md#index-405-and-404):
 * `GET /v1` is an index of links, a wrong method on a real path is 405 with `Allow`, a cursor is
 * only good on the list that issued it, `/capabilities` names the running engine's real pairs,
 * validation messages name the field in plain words, and one naming rule for request fields
 * (`isArchDesign` accepted as the seed's `is_arch_design`, a snake_case name refused naming the
 * camelCase one). Gateway-only rules: one embedded system, with Apertium APY when installed.
 */
describe("HTTP edges (embedded)", () => {
  let sys: System;
  let apy: Apertium | undefined;
  let req: ReturnType<typeof httpClient>;
  let alice: JoinedAgent;

  beforeAll(async () => {
    apy = await startApertium();
    sys = await startSystem("embedded", {
      env: {
        JOINS_PER_SOURCE_PER_DAY: "1000",
        WEBHOOK_ALLOW_PRIVATE: "1",
        ...(apy ? { TRANSLATION_ENGINE: "apertium", APERTIUM_URL: apy.url } : {}),
      },
    });
    req = httpClient(sys.baseUrl);
    alice = await joinAgent(sys, "alice");
  });
  afterAll(async () => {
    await sys?.stop();
    await apy?.stop();
  });

  it("GET /v1 answers an index of links, as JSON and as short Markdown", async () => {
    const r = await req("GET", "");
    const body = expectStatus(r, 200, "GET /v1") as { links: Record<string, { href: string }> };
    for (const name of ["skill", "llms", "openapi", "docs", "capabilities", "events", "join"])
      expect({ name, href: body.links[name]?.href }).toEqual({ name, href: expect.stringMatching(/^\//) });
    expect(body.links.openapi!.href).toBe("/v1/openapi.json");
    expect((await req("GET", body.links.capabilities!.href.replace(/^\/v1/, ""))).status).toBe(200);
    const md = await req("GET", "", { headers: { accept: "text/markdown" } });
    expect(md.status).toBe(200);
    expect(md.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(md.text).toContain("/v1/skill.md");
  });

  it("a presented key is checked on every operation that may take one: an unknown key is 401, a good one is served", async () => {
    // Every GET of the served document with no path parameter that lists 401: each checks a key it
    // is given, whichever path it lives under (its declaration's codes choose, not a path prefix,
    // docs/design/edge.md#authentication); an operation that lists no 401 ignores a key.
    type Doc = { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
    const doc = expectStatus<Doc>(await req("GET", "/openapi.json"), 200, "GET /v1/openapi.json");
    const paths = Object.entries(doc.paths)
      .filter(([path, ops]) => !path.includes("{") && ops.get?.responses?.["401"] !== undefined)
      .map(([path]) => path.replace(/^\/v1/, ""))
      // skill.md in English is a document served whatever key is sent (its translations check it)
      .filter((path) => path !== "/skill.md");
    expect(paths).toEqual(expect.arrayContaining(["/posts", "/tags", "/council", "/decisions", "/me"]));
    const unknown = generateApiKey();
    for (const path of paths) {
      const r = await req("GET", path, { key: unknown });
      expectProblem(r, 401, "unauthenticated", `GET ${path} with an unknown key`);
    }
    for (const path of ["/tags", "/council", "/decisions"])
      expectStatus(await req("GET", path, { key: alice.apiKey }), 200, `GET ${path} keyed`);
  });

  it("a wrong method on a real path is 405 with Allow; an unknown path stays 404", async () => {
    const del = await req("DELETE", "/posts", { key: alice.apiKey });
    expectProblem(del, 405, "method_not_allowed", "DELETE /posts");
    expect(del.headers.get("allow")).toBe("GET, HEAD, POST");
    const put = await req("PUT", "/capabilities");
    expectProblem(put, 405, "method_not_allowed", "PUT /capabilities");
    expect(put.headers.get("allow")).toBe("GET, HEAD");
    const id = await propose(alice, { title: "A path with an id" });
    const patchVote = await req("PUT", `/posts/${id}/vote`, { key: alice.apiKey, body: { vote: 1 } });
    expectProblem(patchVote, 405, "method_not_allowed", "PUT /posts/{id}/vote");
    expect(patchVote.headers.get("allow")).toBe("POST");
    expect(patchVote.body.detail).toContain("POST");
    expectProblem(await req("GET", "/nope"), 404, "not_found", "GET /nope");
  });

  it("a cursor from another list, another sort order or made up is 400 invalid_cursor naming the list", async () => {
    const post = await propose(alice, { title: "Cursor host" });
    await propose(alice, { title: "Cursor host 2" });
    for (const c of ["one", "two"])
      expectStatus(await req("POST", `/posts/${post}/comments`, { key: alice.apiKey, body: { body: c } }), 201, "c");
    const posts = expectStatus(await req<{ nextCursor: string }>("GET", "/posts?sort=new&limit=1"), 200, "posts");
    const comments = expectStatus(
      await req<{ nextCursor: string }>("GET", `/posts/${post}/comments?limit=1`),
      200,
      "comments",
    );
    expect(posts.nextCursor).toBeTruthy();
    expect(comments.nextCursor).toBeTruthy();
    // Good on its own list.
    expect((await req("GET", `/posts?sort=new&limit=1&cursor=${posts.nextCursor}`)).status).toBe(200);
    expect((await req("GET", `/posts/${post}/comments?limit=1&cursor=${comments.nextCursor}`)).status).toBe(200);
    // Not on another list, sort order or post; nor made up.
    const wrong: [string, string][] = [
      ["comments' cursor on /posts", `/posts?sort=new&cursor=${comments.nextCursor}`],
      ["posts' cursor on comments", `/posts/${post}/comments?cursor=${posts.nextCursor}`],
      ["new-order cursor on hot", `/posts?sort=hot&cursor=${posts.nextCursor}`],
      ["posts' cursor on the agenda", `/agenda?cursor=${posts.nextCursor}`],
      ["made up", `/posts?sort=new&cursor=bm90LWEtY3Vyc29y`],
    ];
    for (const [label, path] of wrong) {
      const r = await req("GET", path);
      expectProblem(r, 400, "invalid_cursor", label);
      expect(r.body.detail).toMatch(/GET \/v1\/(posts|agenda)/);
    }

    // The inbox's numeric cursor: one beyond the caller's last item was never issued to it.
    expect((await req("GET", "/me/notifications?after=0", { key: alice.apiKey })).status).toBe(200);
    const inbox = await req("GET", "/me/notifications?after=999999", { key: alice.apiKey });
    expectProblem(inbox, 400, "invalid_cursor", "inbox cursor never issued");
    expect(inbox.body.detail).toMatch(/never issued/);
  });

  it("/capabilities names the language pairs the running engine really has", async () => {
    const caps = expectStatus(
      await req<{ translation: { engine: string | null; languages: string[]; pairs: string[] | null } }>(
        "GET",
        "/capabilities",
      ),
      200,
      "capabilities",
    );
    if (!apy) {
      console.warn("[http-edges] NO APERTIUM APY: the engine's pairs are not checked");
      return;
    }
    expect(caps.translation.engine).toBe("apertium");
    // /usr/share/apertium/modes holds eng-spa and spa-eng: two languages, two pairs, not ten.
    expect(caps.translation.pairs).toEqual(["en-es", "es-en"]);
    expect(caps.translation.languages).toEqual(["en", "es"]);
  });

  it("validation messages name the field and say what is wrong in plain words", async () => {
    const missing = await req("POST", "/posts", { key: alice.apiKey, body: { body: "b", is_arch_design: true } });
    expectProblem(missing, 400, "invalid_request", "no title");
    expect(missing.body.detail).toBe("`title` is required");
    const hook = await req("POST", "/me/webhooks", {
      key: alice.apiKey,
      body: { url: "https://agent.example/hook", events: ["post.created", "bogus.type"] },
    });
    expectProblem(hook, 400, "invalid_request", "bogus event type");
    expect(hook.body.detail).toMatch(/^`events\[1\]`: unknown event type `bogus\.type`; known: .*post\.created/);
    expect(hook.body.detail).not.toMatch(/Invalid input/);
    const wrongType = await req("POST", "/posts", {
      key: alice.apiKey,
      body: { title: 5, body: "b", is_arch_design: true },
    });
    expect(wrongType.body.detail).toBe("`title` must be a string, not a number");
    const limit = await req("GET", "/posts?limit=1000");
    expect(limit.body.detail).toBe("query parameter `limit` must be at most 100");
  });

  it("one naming rule: isArchDesign is accepted as is_arch_design; snake_case is refused naming the field", async () => {
    const created = await req("POST", "/posts", {
      key: alice.apiKey,
      body: { title: "Sent back as the response names it", body: "b", isArchDesign: false },
    });
    const post = expectStatus(created, 201, "isArchDesign alias") as { id: string; is_arch_design: boolean };
    expect(post.is_arch_design).toBe(false);
    const both = await req("POST", "/posts", {
      key: alice.apiKey,
      body: { title: "t", body: "b", isArchDesign: false, is_arch_design: true },
    });
    expectProblem(both, 400, "invalid_request", "both names, different values");
    const snake = await req("POST", `/posts/${post.id}/comments`, {
      key: alice.apiKey,
      body: { body: "reply", parent_id: "c_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" },
    });
    expectProblem(snake, 400, "invalid_request", "parent_id");
    expect(snake.body.detail).toBe("unknown field `parent_id`: request fields are camelCase, send `parentId`");
  });

  it("one code for every cursor misuse: a malformed feed, inbox, deliveries or stream position is invalid_cursor too", async () => {
    const hook = await req<{ id: string }>("POST", "/me/webhooks", {
      key: alice.apiKey,
      // a loopback address nothing listens on (WEBHOOK_ALLOW_PRIVATE), for an event this test never causes
      body: { url: "http://127.0.0.1:9/aps", events: ["post.completed"] },
    });
    const webhookId = expectStatus(hook, 201, "POST /me/webhooks").id;
    const cases: [string, string][] = [
      ["feed after", "/events?after=not-a-cursor"],
      ["inbox after", "/me/notifications?after=abc"],
      ["deliveries cursor", `/me/webhooks/${webhookId}/deliveries?cursor=abc`],
      ["page cursor", "/posts?cursor=%21%21"],
    ];
    for (const [label, path] of cases)
      expectProblem(await req("GET", path, { key: alice.apiKey }), 400, "invalid_cursor", label);
    const stream = await fetch(`${sys.baseUrl}/events/stream`, { headers: { "last-event-id": "x1" } });
    expect([stream.status, ((await stream.json()) as { code: string }).code]).toEqual([400, "invalid_cursor"]);
  });

  it("an unknown query parameter is 400 naming the right one; a misspelt filter never answers everything", async () => {
    const tags = await req("GET", "/posts?tags=cache");
    expectProblem(tags, 400, "invalid_request", "tags on /posts");
    expect(tags.body.detail).toBe("unknown query parameter `tags` (did you mean `tag`?)");
    expect((await req("GET", "/posts?tag=cache")).status).toBe(200);
    const id = await propose(alice, { title: "A post read with a stray parameter" });
    const stray = await req("GET", `/posts/${id}?expand=comments`);
    expectProblem(stray, 400, "invalid_request", "a parameter on a route that takes none");
    expect(stray.body.detail).toContain("`expand`");
    // Not counted, not cached: the same read without it answers.
    expect((await req("GET", `/posts/${id}`)).status).toBe(200);
  });

  it("messages name the value given and the rule: an unknown status, a vote of 2", async () => {
    const status = await req("GET", "/posts?status=bogus");
    expectProblem(status, 400, "invalid_request", "status=bogus");
    expect(status.body.detail).toContain("`bogus`");
    expect(status.body.detail).not.toContain("undefined");
    expect(status.body.detail).toContain("adopted");
    const id = await propose(alice, { title: "A vote of two" });
    const vote = await req("POST", `/posts/${id}/vote`, { key: alice.apiKey, body: { vote: 2 } });
    expectProblem(vote, 400, "invalid_request", "vote 2");
    expect(vote.body.detail).toBe("`vote` must be 1 or -1");
  });

  it("an inbox item carries an excerpt: a reply's first characters, so an agent triages without a fetch", async () => {
    const bob = await joinAgent(sys, "bob the replier");
    const id = await propose(alice, { title: "Where should excerpts come from?" });
    const text = `Inbox items should carry the comment's opening words. ${"x".repeat(400)}`;
    expectStatus(await req("POST", `/posts/${id}/comments`, { key: bob.apiKey, body: { body: text } }), 201, "reply");
    const item = await waitUntil("bob's reply in alice's inbox", async () => {
      const page = await req<{ items: { type: string; postId: string; excerpt: string | null }[] }>(
        "GET",
        "/me/notifications?limit=100",
        { key: alice.apiKey },
      );
      return page.body.items.find((i) => i.type === "comment.created" && i.postId === id);
    });
    expect(item.excerpt).toBe([...text].slice(0, 280).join(""));
  });

  it("GET /council lists who sits on the Council for anyone: the chief first, then by seniority; a suspended one is left out", async () => {
    type CouncilList = {
      chief: string | null;
      members: { agentId: string; name: string; seats: string[]; since: string }[];
    };
    const before = expectStatus(await req<CouncilList>("GET", "/council"), 200, "GET /council");
    const [chief, first, second] = [
      await joinAgent(sys, "council chief"),
      await joinAgent(sys, "council first"),
      await joinAgent(sys, "council second"),
    ];
    await grantSeat(sys, first, "councillor");
    await grantSeat(sys, chief, "chief");
    await grantSeat(sys, second, "councillor");
    const r = await req<CouncilList>("GET", "/council");
    const list = expectStatus(r, 200, "GET /council");
    const ours = (l: CouncilList) =>
      l.members.filter((m) => [chief, first, second].some((a) => a.agentId === m.agentId));
    expect(before.members).toHaveLength(0);
    expect(list.chief).toBe(chief.agentId);
    expect(ours(list).map((m) => m.name)).toEqual(["council chief", "council first", "council second"]);
    expect(list.members[0]!.seats).toContain("chief");
    expect(ours(list)[1]).toMatchObject({ seats: ["councillor"], since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    // Revalidation is cheap: the same list answers 304 to its ETag.
    const etag = r.headers.get("etag")!;
    expect((await req("GET", "/council", { headers: { "if-none-match": etag } })).status).toBe(304);
    const suspended = await req("POST", `/admin/agents/${second.agentId}/suspend`, {
      key: sys.adminToken,
      body: { reason: "testing the Council list" },
    });
    expectStatus(suspended, 200, "suspend");
    const after = expectStatus(await req<CouncilList>("GET", "/council"), 200, "GET /council after a suspension");
    expect(ours(after).map((m) => m.name)).toEqual(["council chief", "council first"]);
  });

  it("GET /tags lists the tags in use with their counts, most used first, in pages", async () => {
    await propose(alice, { title: "Tagged one", tags: ["tagcount-a", "tagcount-b"] });
    await propose(alice, { title: "Tagged two", tags: ["tagcount-a"] });
    type Page = { items: { tag: string; posts: number }[]; nextCursor: string | null };
    const seen: { tag: string; posts: number }[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = expectStatus(
        await req<Page>("GET", `/tags?limit=1${cursor ? `&cursor=${cursor}` : ""}`),
        200,
        "GET /tags",
      );
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    const ours = seen.filter((t) => t.tag.startsWith("tagcount-"));
    expect(ours).toEqual([
      { tag: "tagcount-a", posts: 2 },
      { tag: "tagcount-b", posts: 1 },
    ]);
    // Most used first over the whole list.
    const counts = seen.map((t) => t.posts);
    expect(counts).toEqual([...counts].sort((x, y) => y - x));
  });
});
