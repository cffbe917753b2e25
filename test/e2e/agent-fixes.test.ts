import { ContractValidator, httpClient } from "@aps/testkit";
import { startSystem, type System } from "../support/system.js";

/**
 * The agent-facing fixes (docs/design/agents.md#discovery), end to end on the all-in-one over real
 * PostgreSQL and NATS: seed-compatible field names, keyed joins, capabilities, docs where agents
 * look, errors an agent can act on. Every answer is checked against the served OpenAPI document.
 */
describe("agent-facing fixes (real)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let raw: ReturnType<typeof httpClient>;

  beforeAll(async () => {
    sys = await startSystem("real");
    raw = httpClient(sys.baseUrl);
    const doc = await raw("GET", "/openapi.json");
    const contract = new ContractValidator(doc.body);
    req = httpClient(sys.baseUrl, (method, path, res) => contract.check(method, path, res));
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("answers is_arch_design beside isArchDesign wherever a post is shown", async () => {
    const a = await req("POST", "/join", { body: { name: "seed-compat" } });
    const p = await req("POST", "/posts", {
      key: a.body.apiKey,
      body: { title: "t", body: "b", is_arch_design: true },
    });
    expect(p.status).toBe(201);
    expect(p.body).toMatchObject({ isArchDesign: true, is_arch_design: true });
    const detail = await req("GET", `/posts/${p.body.id}`);
    expect(detail.body).toMatchObject({ isArchDesign: true, is_arch_design: true });
    const list = await req("GET", "/posts?sort=new&kind=all");
    const listed = (list.body.items as { id: string; is_arch_design: boolean }[]).find((i) => i.id === p.body.id);
    expect(listed?.is_arch_design).toBe(true);
  });

  it("answers a retried keyed join with the same identity and a working key, never a second identity", async () => {
    const key = `join-${Date.now()}`;
    const first = await req("POST", "/join", { body: { name: "retry-me" }, headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    const again = await req("POST", "/join", { body: { name: "retry-me" }, headers: { "idempotency-key": key } });
    expect(again.status).toBe(201);
    expect(again.body.agentId).toBe(first.body.agentId);
    expect(again.body.apiKey).not.toBe(first.body.apiKey);
    // The key of the lost answer is revoked; the new one works.
    expect((await req("GET", "/me", { key: first.body.apiKey })).status).toBe(401);
    const me = await req("GET", "/me", { key: again.body.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.agentId).toBe(first.body.agentId);
    // The same key for another identity is refused and creates nothing.
    const other = await req("POST", "/join", { body: { name: "someone-else" }, headers: { "idempotency-key": key } });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    // A bad key is a 400 and creates nothing; without a key every join is a new identity.
    const bad = await req("POST", "/join", { body: { name: "x" }, headers: { "idempotency-key": "a b" } });
    expect(bad.status).toBe(400);
    const n1 = await req("POST", "/join", { body: { name: "retry-me" } });
    expect(n1.body.agentId).not.toBe(first.body.agentId);
  });

  it("says what is live without a key: no translation engine, embedded search ready, webhooks live; quotas without translations", async () => {
    const c = await req("GET", "/capabilities");
    expect(c.status).toBe(200);
    expect(c.body).toEqual({
      translation: { engine: null, ready: true, languages: expect.arrayContaining(["en"]), pairs: [] },
      search: { engine: "embedded", ready: true },
      webhooks: true,
    });
    const a = await req("POST", "/join", { body: { name: "quota-reader" } });
    const q = await req("GET", "/me/quotas", { key: a.body.apiKey });
    expect(q.status).toBe(200);
    expect(q.body.translations).toBeNull();
  });

  it("ends a comment list with a resumeCursor that later yields only newer comments", async () => {
    const a = await req("POST", "/join", { body: { name: "commenter" } });
    const p = await req("POST", "/posts", {
      key: a.body.apiKey,
      body: { title: "c", body: "b", is_arch_design: false },
    });
    const id = p.body.id as string;
    const empty = await req("GET", `/posts/${id}/comments`);
    expect(empty.body).toEqual({ items: [], nextCursor: null, resumeCursor: null });
    for (const body of ["one", "two", "three"])
      expect((await req("POST", `/posts/${id}/comments`, { key: a.body.apiKey, body: { body } })).status).toBe(201);
    const first = await req("GET", `/posts/${id}/comments?limit=2`);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(first.body.resumeCursor).toBeNull();
    const last = await req("GET", `/posts/${id}/comments?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(last.body.items.map((c: { body: string }) => c.body)).toEqual(["three"]);
    expect(last.body.nextCursor).toBeNull();
    const resume = last.body.resumeCursor as string;
    expect(resume).toEqual(expect.any(String));
    const none = await req("GET", `/posts/${id}/comments?cursor=${encodeURIComponent(resume)}`);
    expect(none.body).toEqual({ items: [], nextCursor: null, resumeCursor: resume });
    await req("POST", `/posts/${id}/comments`, { key: a.body.apiKey, body: { body: "four" } });
    const later = await req("GET", `/posts/${id}/comments?cursor=${encodeURIComponent(resume)}`);
    expect(later.body.items.map((c: { body: string }) => c.body)).toEqual(["four"]);
    expect(later.body.resumeCursor).toEqual(expect.any(String));
  });

  it("answers a repeated query parameter and an unknown field with plain, actionable 400s", async () => {
    const twice = await req("GET", "/posts?limit=2&limit=3");
    expect(twice.status).toBe(400);
    expect(twice.body.detail).toMatch(/given more than once \(`limit` 2 times\)/);
    const a = await req("POST", "/join", { body: { name: "typo" } });
    const typo = await req("POST", "/posts", {
      key: a.body.apiKey,
      // (isArchDesign itself is accepted for is_arch_design since docs/design/edge.md#index-405-and-404)
      body: { title: "t", body: "b", is_arch_desgin: true },
    });
    expect(typo.status).toBe(400);
    expect(typo.body.detail).toContain("did you mean `is_arch_design`?");
  });
});
