import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createLogger, migrate, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import type { OAuthClientInformationFull } from "@modelcontextprotocol/sdk/shared/auth.js";
import { ACCESS_TOKEN_PREFIX, OAuthStore, REFRESH_TOKEN_PREFIX, secretHash } from "./store.js";

/**
 * The OAuth store on real PostgreSQL (docs/design/agents.md#oauth-for-mcp): codes single use,
 * tokens stored hashed, refresh rotation with reuse revoking the family, revocation, the per-agent
 * cap on live grants, and two stores on one database (two gateway replicas) agreeing.
 */
const log = createLogger("oauth-store-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn("[oauth/store.test] NO PostgreSQL: SKIPPED");
const it_ = pgUp ? it : it.skip;

let tdb: TestDatabase | undefined;
let db: Database | undefined;
if (pgUp) {
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "gateway", poolSize: 4, log });
    await migrate(db, fileURLToPath(new URL("../migrations", import.meta.url)), log);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
}

const opts = { accessTtlS: 3600, refreshTtlS: 86_400, grantsPerAgent: 3 };
const store = () => new OAuthStore(db!.pool, opts);
let n = 0;

/** A registered public client and an approved code for `agentId` with `scopes`. */
async function approved(s: OAuthStore, agentId: string, scopes: string[]) {
  const client: OAuthClientInformationFull = {
    client_id: `c_${++n}`,
    client_id_issued_at: 0,
    redirect_uris: ["http://localhost:9/cb"],
    token_endpoint_auth_method: "none",
    client_name: "test client",
  };
  await s.registerClient(client);
  const challenge = createHash("sha256").update("verifier").digest("base64url");
  const id = await s.createAuthorization({
    clientId: client.client_id,
    redirectUri: "http://localhost:9/cb",
    codeChallenge: challenge,
    state: "st",
    scopes: ["write", "bogus"],
    resource: undefined,
  });
  expect((await s.pendingAuthorization(id))?.scopes).toEqual(["read", "write"]);
  const code = (await s.approve(id, agentId, scopes))!;
  return { client, code, challenge, id };
}

describe("OAuthStore (PostgreSQL)", () => {
  it_("a code is single use, carries its challenge, and yields hashed tokens of the approved scopes", async () => {
    const s = store();
    const { client, code, challenge, id } = await approved(s, "ext_a", ["write", "vote"]);
    expect(await s.approve(id, "ext_a", ["write"])).toBeUndefined(); // decided already
    expect(await s.challengeFor(client.client_id, code)).toBe(challenge);
    await expect(s.challengeFor("other", code)).rejects.toThrow(/unknown, used or expired/);
    await expect(s.exchangeCode(client.client_id, code, "http://localhost:9/other")).rejects.toThrow(/redirect_uri/);
    // the failed exchange rolled back: the code is still there once
    const t = await s.exchangeCode(client.client_id, code, "http://localhost:9/cb");
    await expect(s.exchangeCode(client.client_id, code, undefined)).rejects.toThrow(/unknown, used or expired/);
    expect(t.access_token.startsWith(ACCESS_TOKEN_PREFIX)).toBe(true);
    expect(t.refresh_token!.startsWith(REFRESH_TOKEN_PREFIX)).toBe(true);
    expect(t.scope).toBe("read write vote");
    expect(t.expires_in).toBe(3600);
    const stored = await db!.pool.query<{ token_hash: string }>("SELECT token_hash FROM oauth_tokens");
    const hashes = stored.rows.map((r) => r.token_hash);
    expect(hashes).toContain(secretHash(t.access_token));
    expect(hashes).not.toContain(t.access_token);
    const g = await s.verifyAccess(t.access_token);
    expect(g).toMatchObject({ agentId: "ext_a", clientId: client.client_id, scopes: ["read", "write", "vote"] });
    expect(await s.verifyAccess(`${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`)).toBeUndefined();
    expect(await s.verifyAccess(t.refresh_token!)).toBeUndefined();
  });

  it_("refresh rotates; reusing a rotated refresh token revokes the whole grant", async () => {
    const s = store();
    const { client, code } = await approved(s, "ext_b", ["write"]);
    const first = await s.exchangeCode(client.client_id, code, undefined);
    await expect(s.refresh("another", first.refresh_token!)).rejects.toThrow(/unknown, expired or revoked/);
    await expect(s.refresh(client.client_id, first.refresh_token!, ["council"])).rejects.toThrow(/scope/);
    const second = await s.refresh(client.client_id, first.refresh_token!, ["write"]);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await s.verifyAccess(second.access_token)).toBeDefined();
    // the old refresh token again: reuse → the family ends, the new tokens with it
    await expect(s.refresh(client.client_id, first.refresh_token!)).rejects.toThrow(/used already/);
    expect(await s.verifyAccess(second.access_token)).toBeUndefined();
    expect(await s.verifyAccess(first.access_token)).toBeUndefined();
    await expect(s.refresh(client.client_id, second.refresh_token!)).rejects.toThrow(/unknown, expired or revoked/);
  });

  it_("revocation (RFC 7009) of either token ends its grant, for its own client only; a replica agrees", async () => {
    const s = store();
    const replica = store();
    const { client, code } = await approved(s, "ext_c", ["write"]);
    const t = await s.exchangeCode(client.client_id, code, undefined);
    expect(await replica.verifyAccess(t.access_token)).toBeDefined();
    await replica.revokeToken("not-the-client", t.access_token);
    expect(await s.verifyAccess(t.access_token)).toBeDefined();
    await replica.revokeToken(client.client_id, t.access_token);
    expect(await s.verifyAccess(t.access_token)).toBeUndefined();
    await expect(s.refresh(client.client_id, t.refresh_token!)).rejects.toThrow(/unknown, expired or revoked/);
    await s.revokeToken(client.client_id, "garbage"); // ignored
  });

  it_("an agent holds at most grantsPerAgent live grants: a new one revokes the oldest; list and revoke", async () => {
    const s = store();
    const tokens = [];
    for (let i = 0; i < 4; i++) {
      const { client, code } = await approved(s, "ext_d", ["write"]);
      tokens.push(await s.exchangeCode(client.client_id, code, undefined));
    }
    expect(await s.verifyAccess(tokens[0]!.access_token)).toBeUndefined();
    for (const t of tokens.slice(1)) expect(await s.verifyAccess(t.access_token)).toBeDefined();
    const grants = await s.listGrants("ext_d");
    expect(grants).toHaveLength(3);
    expect(grants[0]!.clientName).toBe("test client");
    expect(await s.revokeGrant("ext_other", grants[0]!.grantId)).toBe(false);
    expect(await s.revokeGrant("ext_d", grants[0]!.grantId)).toBe(true);
    expect(await s.verifyAccess(tokens[3]!.access_token)).toBeUndefined();
    expect(await s.revokeAgent("ext_d")).toBe(2);
    expect(await s.listGrants("ext_d")).toEqual([]);
  });

  it_("an expired access token is refused; a denied request is gone", async () => {
    const s = store();
    const { client, code } = await approved(s, "ext_e", []);
    const t = await s.exchangeCode(client.client_id, code, undefined);
    expect(t.scope).toBe("read");
    await db!.pool.query("UPDATE oauth_tokens SET expires_at = now() - interval '1 s' WHERE token_hash = $1", [
      secretHash(t.access_token),
    ]);
    expect(await s.verifyAccess(t.access_token)).toBeUndefined();
    const id = await s.createAuthorization({
      clientId: client.client_id,
      redirectUri: "http://localhost:9/cb",
      codeChallenge: "x",
      state: undefined,
      scopes: [],
      resource: undefined,
    });
    await s.deny(id);
    expect(await s.pendingAuthorization(id)).toBeUndefined();
    expect(await s.approve(id, "ext_e", [])).toBeUndefined();
  });
});
