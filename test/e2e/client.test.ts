import { ApiError, createApsClient, unwrap, type ApsClient } from "@aps/client";
import { joinAgent } from "../support/fixtures.js";
import { routeModes, startSystem, type System } from "../support/system.js";

/**
 * The API's main flows through its own typed client, `@aps/client` (generated from the OpenAPI
 * document, docs/design/agents.md#typed-client), in every run mode: a path, parameter, body or field the document does
 * not have is a type error here, and every request and answer also passes the contract check
 * (test/support/contract.setup.ts, docs/design/edge.md#contract-checks). The same flows over a hand-written client are
 * test/e2e/api.test.ts.
 */
const modes = await routeModes("client.test.ts"); // docs/design/tests.md#test-tiers "Run modes"; the image: api and notifications (docs/design/tests.md#container-systems)

describe.each(modes)("@aps/client against the API (%s)", (mode) => {
  let sys: System;
  let anonymous: ApsClient;
  const as = (key: string) => createApsClient({ baseUrl: sys.baseUrl, token: key });

  beforeAll(async () => {
    sys = await startSystem(mode);
    anonymous = createApsClient({ baseUrl: sys.baseUrl });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("reads the meta routes: version, capabilities and the document itself", async () => {
    const { version } = await unwrap(anonymous.GET("/v1/skill-version"));
    expect(Number.isInteger(version)).toBe(true);
    const caps = await unwrap(anonymous.GET("/v1/capabilities"));
    expect(caps.search.engine).toBe("embedded");
    const doc = await unwrap(anonymous.GET("/v1/openapi.json"));
    expect(doc.openapi).toBe("3.1.0");
  });

  it("joins, posts, comments, votes and reads back, every shape as typed", async () => {
    const alice = await joinAgent(sys, "client alice");
    const bob = await joinAgent(sys, "client bob");
    expect(alice.agentId).toMatch(/^ext_[0-9A-Z]{26}$/);
    const me = await unwrap(as(alice.apiKey).GET("/v1/me"));
    expect(me).toMatchObject({ agentId: alice.agentId, name: "client alice", seats: [] });

    const created = await as(alice.apiKey).POST("/v1/posts", {
      body: { title: "Typed proposal", body: "Made by **@aps/client**.", is_arch_design: true },
    });
    expect(created.response.status).toBe(201);
    const post = created.data!;
    expect(created.response.headers.get("location")).toBe(`/v1/posts/${post.id}`);
    expect(post).toMatchObject({ kind: "arch", status: "open", isArchDesign: true, is_arch_design: true });

    const path = { params: { path: { id: post.id } } };
    const comment = await unwrap(as(bob.apiKey).POST("/v1/posts/{id}/comments", { ...path, body: { body: "Typed!" } }));
    expect(comment).toMatchObject({ postId: post.id, body: "Typed!", author: { agentId: bob.agentId } });
    const vote = await unwrap(as(bob.apiKey).POST("/v1/posts/{id}/vote", { ...path, body: { vote: 1 } }));
    expect(vote.votes).toEqual({ for: 1, against: 0, score: 1 });

    const detail = await unwrap(as(bob.apiKey).GET("/v1/posts/{id}", path));
    expect(detail).toMatchObject({ id: post.id, commentCount: 1, myVote: 1 });
    expect(detail.comments.map((c) => c.body)).toEqual(["Typed!"]);

    const page = await unwrap(
      anonymous.GET("/v1/posts", { params: { query: { kind: "arch", sort: "new", limit: 5 } } }),
    );
    expect(page.items.map((p) => p.id)).toContain(post.id);
    const comments = await unwrap(
      anonymous.GET("/v1/posts/{id}/comments", { params: { ...path.params, query: { limit: 1 } } }),
    );
    expect(comments.items).toHaveLength(1);
    const mine = await unwrap(
      anonymous.GET("/v1/agents/{agentId}/posts", { params: { path: { agentId: alice.agentId } } }),
    );
    expect(mine.items.map((p) => p.id)).toEqual([post.id]);
    const quotas = await unwrap(as(alice.apiKey).GET("/v1/me/quotas"));
    expect(quotas.posts.used).toBe(1);
    expect(quotas.translations).toBeNull();
  });

  it("keys paginate: every post once over keyset pages", async () => {
    const a = await joinAgent(sys, "client pager");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (
          await unwrap(
            as(a.apiKey).POST("/v1/posts", { body: { title: `typed page ${i}`, body: "x", is_arch_design: false } }),
          )
        ).id,
      );
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await unwrap(
        anonymous.GET("/v1/agents/{agentId}/posts", {
          params: { path: { agentId: a.agentId }, query: { limit: 2, ...(cursor ? { cursor } : {}) } },
        }),
      );
      seen.push(...page.items.map((p) => p.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it("retries a join with the same Idempotency-Key as the same agent (a fresh key)", async () => {
    const first = await joinAgent(sys, "client retry", { idempotencyKey: "client-join-1" });
    const again = await joinAgent(sys, "client retry", { idempotencyKey: "client-join-1" });
    expect(again.agentId).toBe(first.agentId);
    expect(again.apiKey).not.toBe(first.apiKey);
  });

  it("lets the owner grant a seat through the typed admin routes", async () => {
    const a = await joinAgent(sys, "client councillor");
    const owner = as(sys.adminToken);
    const granted = await unwrap(owner.POST("/v1/admin/seats", { body: { agentId: a.agentId, seat: "councillor" } }));
    expect(granted.seats).toEqual(["councillor"]);
    const revoked = await unwrap(
      owner.DELETE("/v1/admin/seats/{agentId}/{seat}", {
        params: { path: { agentId: a.agentId, seat: "councillor" } },
      }),
    );
    expect(revoked.seats).toEqual([]);
  });

  it("turns problem answers into ApiError with the document's code", async () => {
    const missing = await unwrap(
      anonymous.GET("/v1/posts/{id}", { params: { path: { id: "p_01ARZ3NDEKTSV4RRFFQ69G5FAV" } } }),
    ).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, problem: { code: "not_found", status: 404 } });
    const unauthenticated = await anonymous.GET("/v1/me");
    expect(unauthenticated.response.status).toBe(401);
    expect(unauthenticated.error).toMatchObject({ code: "unauthenticated" });
  });
});
