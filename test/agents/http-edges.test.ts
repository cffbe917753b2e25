import { httpClient } from "@aps/testkit";
import { startApertium, type Apertium } from "../support/apertium.js";
import { expectProblem, expectStatus, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * The HTTP edges an agent walks into from the base URL alone (issue 32 items 4 and 5, docs/adr/0170):
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
});
