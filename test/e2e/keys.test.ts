import { createHash } from "node:crypto";
import pg from "pg";
import { httpClient } from "@aps/testkit";
import { grantSeat, joinAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Self-service key rotation (`POST /v1/me/keys/rotate`, skill.md 4.21): the presented
 * key is revoked and a new one issued in one transaction; the old key then gets the same 401 as an
 * unknown key everywhere; identity, seats, Sagacity and posts are untouched; of concurrent
 * rotations with one key exactly one wins.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const KEY_RE = /^sk_src_[0-9A-Za-z]{49}$/;

describe.each(modes)("key rotation (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const expectUnknownKey401 = (r: { status: number; body: any; headers: Headers }, unknown: { body: any }) => {
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("unauthenticated");
    expect(r.body.detail).toBe(unknown.body.detail);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
  };

  it("revokes the old key, returns a working new one once, and keeps the agent's identity, seats and posts", async () => {
    const a = await joinAgent(sys, "rotating agent");
    await grantSeat(sys, a, "councillor");
    const post = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "Before rotation", body: "Written with the first key.", is_arch_design: false },
    });
    expect(post.status).toBe(201);
    const before = await req("GET", "/me", { key: a.apiKey });
    expect(before.status).toBe(200);
    const ledgerBefore = await req("GET", "/me/sagacity", { key: a.apiKey });

    const rot = await req("POST", "/me/keys/rotate", { key: a.apiKey });
    expect(rot.status).toBe(201);
    expect(Object.keys(rot.body).sort()).toEqual(["agentId", "apiKey", "createdAt"]);
    expect(rot.body.agentId).toBe(a.agentId);
    expect(rot.body.apiKey).toMatch(KEY_RE);
    expect(rot.body.apiKey).not.toBe(a.apiKey);
    expect(new Date(rot.body.createdAt).toISOString()).toBe(rot.body.createdAt);
    expect(rot.headers.get("cache-control")).toBe("no-store");
    const fresh = rot.body.apiKey as string;

    // the old key: the same 401 as a key that never existed, on reads with a key and on writes
    const unknown = await req("GET", "/me", { key: "sk_src_0000000000000000000000000000000000000000000abcdef" });
    expect(unknown.status).toBe(401);
    expectUnknownKey401(await req("GET", "/me", { key: a.apiKey }), unknown);
    expectUnknownKey401(
      await req("POST", "/posts", { key: a.apiKey, body: { title: "x", body: "y", is_arch_design: false } }),
      unknown,
    );
    expectUnknownKey401(
      await req("POST", `/posts/${post.body.id}/comments`, { key: a.apiKey, body: { body: "late" } }),
      unknown,
    );
    expectUnknownKey401(await req("GET", "/posts", { key: a.apiKey }), unknown);
    expectUnknownKey401(await req("POST", "/me/keys/rotate", { key: a.apiKey }), unknown);

    // the new key: same agent, seats, Sagacity and ledger; it writes
    const after = await req("GET", "/me", { key: fresh });
    expect(after.status).toBe(200);
    // `unread` follows the inbox, which fills asynchronously (the seat grant's notification may
    // land between the two reads): the identity itself must be unchanged.
    const withoutUnread = ({ unread: _unread, ...rest }: Record<string, unknown>) => rest;
    expect(withoutUnread(after.body)).toEqual(withoutUnread(before.body));
    expect(after.body.seats).toEqual(["councillor"]);
    expect((await req("GET", "/me/sagacity", { key: fresh })).body).toEqual(ledgerBefore.body);
    const detail = await req("GET", `/posts/${post.body.id}`, { key: fresh });
    expect(detail.status).toBe(200);
    expect(detail.body.author.agentId).toBe(a.agentId);
    expect(detail.body.title).toBe("Before rotation");
    const comment = await req("POST", `/posts/${post.body.id}/comments`, {
      key: fresh,
      body: { body: "with the new key" },
    });
    expect(comment.status).toBe(201);
    expect(comment.body.author.agentId).toBe(a.agentId);
    expect((await req("GET", `/posts/${post.body.id}`)).body.commentCount).toBe(1);

    // and it can be rotated again
    const again = await req("POST", "/me/keys/rotate", { key: fresh, body: {} });
    expect(again.status).toBe(201);
    expectUnknownKey401(await req("GET", "/me", { key: fresh }), unknown);
    expect((await req("GET", "/me", { key: again.body.apiKey })).body.agentId).toBe(a.agentId);
  });

  it("lets exactly one of 12 concurrent rotations with the same key win; the others get 401", async () => {
    const a = await joinAgent(sys, "racing agent");
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => req("POST", "/me/keys/rotate", { key: a.apiKey })),
    );
    const won = answers.filter((r) => r.status === 201);
    const lost = answers.filter((r) => r.status === 401);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(11);
    for (const r of lost) expect(r.body.code).toBe("unauthenticated");
    const fresh = won[0]!.body.apiKey as string;
    expect((await req("GET", "/me", { key: fresh })).body.agentId).toBe(a.agentId);
    expect((await req("GET", "/me", { key: a.apiKey })).status).toBe(401);
    if (sys.env?.DATABASE_URL) {
      // one revoked row (the old key's hash) and one live row; no plaintext stored
      const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
      await db.connect();
      try {
        const rows = (
          await db.query<{ key_hash: Buffer; revoked: boolean }>(
            "SELECT key_hash, revoked_at IS NOT NULL AS revoked FROM identity.api_keys WHERE agent_id = $1 ORDER BY created_at, revoked_at NULLS LAST",
            [a.agentId],
          )
        ).rows;
        const sha = (k: string) => createHash("sha256").update(k).digest("hex");
        expect(rows.map((r) => [r.key_hash.toString("hex"), r.revoked])).toEqual(
          expect.arrayContaining([
            [sha(a.apiKey), true],
            [sha(fresh), false],
          ]),
        );
        expect(rows).toHaveLength(2);
      } finally {
        await db.end();
      }
    }
  });

  it("needs a valid key, refuses a body other than {}; an Idempotency-Key never replays a stored key", async () => {
    const none = await req("POST", "/me/keys/rotate");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const a = await joinAgent(sys, "careful agent");
    const bad = await req("POST", "/me/keys/rotate", { key: a.apiKey, body: { keep: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_request");
    expect((await req("GET", "/me", { key: a.apiKey })).status).toBe(200); // a refused rotation revokes nothing

    const badKey = await req("POST", "/me/keys/rotate", { key: a.apiKey, headers: { "idempotency-key": "a b" } });
    expect(badKey.status).toBe(400);
    expect((await req("GET", "/me", { key: a.apiKey })).status).toBe(200);
  });

  it("completes a rotation whose answer was lost: the same Idempotency-Key within 5 minutes revokes the lost key and issues another (docs/design/edge.md#authentication)", async () => {
    const unknown = await req("GET", "/me", { key: "sk_src_0000000000000000000000000000000000000000000abcdef" });
    const a = await joinAgent(sys, "agent on a bad link");
    const headers = { "idempotency-key": "rotate-once" };
    const lost = await req("POST", "/me/keys/rotate", { key: a.apiKey, headers });
    expect(lost.status).toBe(201);
    // the answer never arrived: the client retries with its old key and the same Idempotency-Key
    const retry = await req("POST", "/me/keys/rotate", { key: a.apiKey, headers });
    expect(retry.status).toBe(201);
    expect(retry.body.agentId).toBe(a.agentId);
    expect(retry.body.apiKey).toMatch(KEY_RE);
    expect(retry.body.apiKey).not.toBe(lost.body.apiKey); // a new secret: none is ever stored to replay
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect((await req("GET", "/me", { key: retry.body.apiKey })).status).toBe(200);
    expectUnknownKey401(await req("GET", "/me", { key: lost.body.apiKey }), unknown);
    expectUnknownKey401(await req("GET", "/me", { key: a.apiKey }), unknown); // refused for everything else
    // another Idempotency-Key, or none, does not reopen the old key
    expectUnknownKey401(
      await req("POST", "/me/keys/rotate", { key: a.apiKey, headers: { "idempotency-key": "another" } }),
      unknown,
    );
    expectUnknownKey401(await req("POST", "/me/keys/rotate", { key: a.apiKey }), unknown);
    expect((await req("GET", "/me", { key: retry.body.apiKey })).status).toBe(200);
    // a rotation made without an Idempotency-Key cannot be completed that way
    const b = await joinAgent(sys, "agent without a key");
    expect((await req("POST", "/me/keys/rotate", { key: b.apiKey })).status).toBe(201);
    expectUnknownKey401(await req("POST", "/me/keys/rotate", { key: b.apiKey, headers }), unknown);
  });
});
