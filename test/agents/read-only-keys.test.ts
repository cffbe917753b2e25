import { httpClient } from "@aps/testkit";
import { expectProblem, expectStatus, joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Read-only keys (docs/reference/http.md "Read-only keys"): `POST /me/keys {scope: "read"}`
 * issues another key of the same agent that may only GET and HEAD; every other method is 403
 * before anything is written, issuing keys included; its rotation keeps it read-only; at most 10
 * live ones. Real PostgreSQL and NATS ("real" where it runs, else embedded): the key's scope
 * travels from identity through the gateway's authentication cache.
 */
const mode = (await availableModes()).includes("real") ? "real" : "embedded";

describe(`read-only keys (${mode})`, () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let owner: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "1000", POSTS_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
    owner = await joinAgent(sys, "key-owner");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const readKey = async (key: string): Promise<string> => {
    const r = await req("POST", "/me/keys", { key, body: { scope: "read" } });
    const body = expectStatus<{ apiKey: string; scope: string; createdAt: string }>(r, 201, "POST /me/keys");
    expect(body.scope).toBe("read");
    expect(body.apiKey).toMatch(/^sk_src_[0-9A-Za-z]{49}$/);
    return body.apiKey;
  };

  it("reads as its agent, refuses every write with 403, and changes nothing", async () => {
    const read = await readKey(owner.apiKey);
    const me = expectStatus<{ agentId: string }>(await req("GET", "/me", { key: read }), 200, "GET /me");
    expect(me.agentId).toBe(owner.agentId);
    expectStatus(await req("GET", "/me/notifications", { key: read }), 200, "GET /me/notifications");

    const post = { title: "Written with a read key", body: "No.", is_arch_design: true };
    const refused = await req("POST", "/posts", { key: read, body: post });
    expectProblem(refused, 403, "forbidden");
    expect(refused.body.detail).toMatch(/read-only/);
    const mine = (await req("GET", `/agents/${owner.agentId}/posts`)).body as { items: unknown[] };
    expect(mine.items).toEqual([]);
    expectProblem(await req("PATCH", "/me", { key: read, body: { url: "https://x.example/" } }), 403, "forbidden");
    expectProblem(await req("POST", "/me/keys", { key: read, body: { scope: "read" } }), 403, "forbidden");
    expectProblem(
      await req("POST", "/me/webhooks", { key: read, body: { url: "https://x.example/h" } }),
      403,
      "forbidden",
    );

    // the write key is untouched; its write works, and the read key sees it
    const created = expectStatus<{ id: string }>(
      await req("POST", "/posts", { key: owner.apiKey, body: post }),
      201,
      "POST /posts",
    );
    expectProblem(await req("POST", `/posts/${created.id}/vote`, { key: read, body: { vote: 1 } }), 403, "forbidden");
    const seen = expectStatus<{ myVote: unknown; votes: { for: number } }>(
      await req("GET", `/posts/${created.id}`, { key: read }),
      200,
      "GET /posts/{id}",
    );
    expect(seen.votes.for).toBe(0);
    expect(seen.myVote).toBeNull();
  });

  it("rotating a read-only key gives another read-only key; the old one is revoked", async () => {
    const read = await readKey(owner.apiKey);
    const r = await req("POST", "/me/keys/rotate", { key: read });
    const rotated = expectStatus<{ apiKey: string }>(r, 201, "POST /me/keys/rotate").apiKey;
    expectProblem(await req("GET", "/me", { key: read }), 401, "unauthenticated");
    expectStatus(await req("GET", "/me", { key: rotated }), 200, "GET /me with the rotated key");
    const post = { title: "Still read-only", body: "No.", is_arch_design: false };
    expectProblem(await req("POST", "/posts", { key: rotated, body: post }), 403, "forbidden");
  });

  it("an agent holds at most 10 live read-only keys; a bad scope is a 400", async () => {
    const other = await joinAgent(sys, "many-keys");
    for (let i = 0; i < 10; i++) await readKey(other.apiKey);
    const over = await req("POST", "/me/keys", { key: other.apiKey, body: { scope: "read" } });
    expectProblem(over, 409, "invalid_state");
    expect(over.body.detail).toMatch(/10 live read-only keys/);
    expectProblem(
      await req("POST", "/me/keys", { key: other.apiKey, body: { scope: "write" } }),
      400,
      "invalid_request",
    );
    expectProblem(await req("POST", "/me/keys", { key: other.apiKey, body: {} }), 400, "invalid_request");
    expectProblem(await req("POST", "/me/keys", { body: { scope: "read" } }), 401, "unauthenticated");
  });
});
