import { createLogger } from "@aps/platform";
import { loadConfig, startGateway, type GatewayHandle } from "@aps/gateway";
import { waitUntil } from "@aps/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, TEST_RATE_LIMITS, type System } from "../support/system.js";

/**
 * OAuth 2.1 for MCP (docs/design/agents.md#oauth-for-mcp) end to end against the all-in-one as
 * `npm start` runs it (embedded): the MCP SDK's own OAuth client starts from `/mcp`'s 401,
 * discovers the protected-resource and authorization-server metadata, registers itself (RFC
 * 7591), and is sent to the consent page, which the test fills in as the agent's owner would
 * (its API key, the scopes); the redirect's code goes back to the SDK (PKCE S256), which gets the
 * tokens. Then: `propose` works with `write` and is a tool error 403 with `read` only; refresh
 * tokens rotate and a reused one ends the family; a revoked token is refused on `/mcp` and
 * `/v1`; a second gateway on the same database accepts the tokens; the agent lists and revokes
 * its grants with its key; deny, a bad key and the owner's key revocation.
 */
const log = createLogger("mcp-oauth-test", "warn");
const REDIRECT = "http://localhost:9/callback";

let sys: System;
let origin: string;
let alice: JoinedAgent;
let second: GatewayHandle | undefined;
const clients: Client[] = [];

beforeAll(async () => {
  sys = await startSystem("embedded", { env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" } });
  origin = sys.baseUrl.replace(/\/v1$/, "");
  alice = await joinAgent(sys, "alice");
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await second?.stop();
  await sys?.stop();
});

/** The SDK's client side of OAuth, in memory; `redirectToAuthorization` only records the URL. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "e2e hosted client <b>",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return "state-123";
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const mcpUrl = () => new URL(`${origin}/mcp`);

/** Opens the consent page of `authUrl` and submits it; answers the response (redirect not followed). */
async function consent(authUrl: URL, fields: { apiKey: string; scopes: string[]; decision: "approve" | "deny" }) {
  const page = await fetch(authUrl);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  const text = await page.text();
  expect(text).toContain("e2e hosted client &lt;b&gt;"); // the client's name, escaped
  expect(text).not.toContain("<b>e2e hosted client <b>");
  const id = /name="authorization" value="([^"]+)"/.exec(text)![1]!;
  const form = new URLSearchParams({ authorization: id, api_key: fields.apiKey, decision: fields.decision });
  for (const s of fields.scopes) form.append("scope", s);
  return fetch(`${origin}/oauth/consent`, { method: "POST", body: form, redirect: "manual" });
}

/** The SDK's OAuth flow from a 401 of /mcp to a connected client, the owner granting `scopes` with `agent`'s key. */
async function authorize(agent: JoinedAgent, scopes: string[]) {
  const provider = new MemoryProvider();
  const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await expect(new Client({ name: "e2e-oauth", version: "1" }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  expect(provider.info?.client_id).toBeTruthy(); // registered (RFC 7591)
  const authUrl = provider.authUrl!;
  expect(authUrl.pathname).toBe("/authorize");
  expect(authUrl.searchParams.get("code_challenge_method")).toBe("S256");
  const answer = await consent(authUrl, { apiKey: agent.apiKey, scopes, decision: "approve" });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get("location")!);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
  expect(back.searchParams.get("state")).toBe("state-123");
  await first.finishAuth(back.searchParams.get("code")!);
  expect(provider.saved?.access_token).toMatch(/^aps_at_/);
  const client = new Client({ name: "e2e-oauth", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  clients.push(client);
  return { client, provider };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = r.content[0];
  return { isError: r.isError === true, text: first?.type === "text" ? first.text : "" };
}

/** POST to the token endpoint (form-encoded). */
const tokenRequest = (fields: Record<string, string>) =>
  fetch(`${origin}/token`, { method: "POST", body: new URLSearchParams(fields) });

const v1Me = (token: string, base = origin) =>
  fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${token}` } });

describe("OAuth for MCP (embedded, as npm start)", () => {
  it("/mcp without credentials is a 401 pointing at the metadata; anonymous readers use /mcp/public", async () => {
    const r = await fetch(`${origin}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(r.status).toBe(401);
    const www = r.headers.get("www-authenticate")!;
    expect(www).toMatch(/^Bearer /);
    const prmUrl = /resource_metadata="([^"]+)"/.exec(www)![1]!;
    expect(prmUrl).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);
    const prm = (await (await fetch(prmUrl)).json()) as { resource: string; authorization_servers: string[] };
    expect(prm.resource).toBe(`${origin}/mcp`);
    const as = (await (
      await fetch(new URL("/.well-known/oauth-authorization-server", prm.authorization_servers[0]))
    ).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: `${origin}/`,
      code_challenge_methods_supported: ["S256"],
      registration_endpoint: `${origin}/register`,
      revocation_endpoint: `${origin}/revoke`,
      scopes_supported: ["read", "write", "vote", "council"],
    });

    const anon = new Client({ name: "e2e-anon", version: "1" });
    await anon.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp/public`)));
    clients.push(anon);
    expect((await call(anon, "list_posts", { limit: 1 })).isError).toBe(false);
    expect((await call(anon, "my_status")).text).toMatch(/^Error unauthenticated \(HTTP 401\)/);

    // an API key on /mcp works exactly as before
    const keyed = new Client({ name: "e2e-key", version: "1" });
    await keyed.connect(
      new StreamableHTTPClientTransport(mcpUrl(), {
        requestInit: { headers: { authorization: `Bearer ${alice.apiKey}` } },
      }),
    );
    clients.push(keyed);
    expect((await call(keyed, "my_status")).isError).toBe(false);
  });

  it("the SDK's client completes discovery, registration, consent and token; write scope proposes, read only cannot", async () => {
    const writer = await authorize(alice, ["write"]);
    expect(writer.provider.saved?.scope).toBe("read write");
    const ok = await call(writer.client, "propose", { title: "Proposed over OAuth", body: "b", is_arch_design: false });
    expect(ok.isError).toBe(false);
    const me = await call(writer.client, "my_status");
    expect(me.text).toContain(alice.agentId);
    const postId = /p_[0-9A-Z]{26}/.exec(ok.text)![0];
    // write is not vote
    const vote = await call(writer.client, "vote", { post_id: postId, vote: 1 });
    expect(vote.text).toMatch(/^Error forbidden \(HTTP 403\).*lacks the scope 'vote'/s);

    const reader = await authorize(alice, []);
    expect(reader.provider.saved?.scope).toBe("read");
    expect((await call(reader.client, "list_posts", { limit: 1 })).isError).toBe(false);
    const refused = await call(reader.client, "propose", { title: "Not allowed", body: "b", is_arch_design: false });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Error forbidden \(HTTP 403\).*lacks the scope 'write'/s);
    // the same on /v1
    const direct = await fetch(`${origin}/v1/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${reader.provider.saved!.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "t", body: "b", is_arch_design: false }),
    });
    expect(direct.status).toBe(403);
    expect(((await direct.json()) as { detail: string }).detail).toMatch(/lacks the scope 'write'/);
  });

  it("refresh tokens rotate; a reused one revokes the family", async () => {
    const { provider } = await authorize(alice, ["write"]);
    const clientId = provider.info!.client_id;
    const old = provider.saved!;
    const r = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: old.refresh_token!,
      client_id: clientId,
    });
    expect(r.status).toBe(200);
    const fresh = (await r.json()) as OAuthTokens;
    expect(fresh.refresh_token).not.toBe(old.refresh_token);
    expect((await v1Me(fresh.access_token)).status).toBe(200);
    const again = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: old.refresh_token!,
      client_id: clientId,
    });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe("invalid_grant");
    // the whole family is gone: the new access and refresh tokens too
    expect((await v1Me(fresh.access_token)).status).toBe(401);
    const after = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: fresh.refresh_token!,
      client_id: clientId,
    });
    expect(after.status).toBe(400);
  });

  it("a revoked access token is refused on /mcp (401 invalid_token) and on /v1; a second gateway shares the store", async () => {
    const { provider } = await authorize(alice, ["write"]);
    const token = provider.saved!.access_token;
    second = await startGateway(
      loadConfig({
        ...sys.grpcAddrs,
        ...TEST_RATE_LIMITS,
        APS_INTERNAL_TOKEN: sys.internalToken!,
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "warn",
      }),
      log,
      { databaseUrl: sys.databaseUrl },
    );
    const secondOrigin = second.baseUrl.replace(/\/v1$/, "");
    const viaSecond = await v1Me(token, secondOrigin);
    expect(viaSecond.status).toBe(200);
    expect(((await viaSecond.json()) as { agentId: string }).agentId).toBe(alice.agentId);

    const revoked = await fetch(`${secondOrigin}/revoke`, {
      method: "POST",
      body: new URLSearchParams({ token, client_id: provider.info!.client_id }),
    });
    expect(revoked.status).toBe(200);
    expect((await v1Me(token)).status).toBe(401);
    const mcp = await fetch(`${origin}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toMatch(/error="invalid_token".*resource_metadata=/);
  });

  it("the agent lists and revokes its grants with its API key (GET/DELETE /v1/me/oauth-grants); a token may not", async () => {
    const carol = await joinAgent(sys, "carol");
    const { provider } = await authorize(carol, ["write", "vote"]);
    const token = provider.saved!.access_token;
    const key = { authorization: `Bearer ${carol.apiKey}` };
    const listed = await fetch(`${sys.baseUrl}/me/oauth-grants`, { headers: key });
    expect(listed.status).toBe(200);
    const { items } = (await listed.json()) as { items: { id: string; clientName: string; scopes: string[] }[] };
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ clientName: "e2e hosted client <b>", scopes: ["read", "write", "vote"] });
    const byToken = await fetch(`${sys.baseUrl}/me/oauth-grants`, { headers: { authorization: `Bearer ${token}` } });
    expect(byToken.status).toBe(403);
    expect(
      (await fetch(`${sys.baseUrl}/me/oauth-grants/og_AAAAAAAAAAAAAAAA`, { method: "DELETE", headers: key })).status,
    ).toBe(404);
    const revoked = await fetch(`${sys.baseUrl}/me/oauth-grants/${items[0]!.id}`, { method: "DELETE", headers: key });
    expect(revoked.status).toBe(200);
    expect((await v1Me(token)).status).toBe(401);
    expect(
      ((await (await fetch(`${sys.baseUrl}/me/oauth-grants`, { headers: key })).json()) as { items: [] }).items,
    ).toEqual([]);
  });

  it("deny redirects with access_denied; a wrong key keeps the page; suspension refuses a token; the owner's key revocation ends the grants", async () => {
    const provider = new MemoryProvider();
    const t = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    await expect(new Client({ name: "e2e-deny", version: "1" }).connect(t)).rejects.toBeInstanceOf(UnauthorizedError);
    const wrong = await consent(provider.authUrl!, {
      apiKey: `sk_src_${"x".repeat(49)}`,
      scopes: ["write"],
      decision: "approve",
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("unknown or revoked");
    const denied = await consent(provider.authUrl!, { apiKey: "", scopes: [], decision: "deny" });
    expect(denied.status).toBe(302);
    const back = new URL(denied.headers.get("location")!);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("state-123");

    const bob = await joinAgent(sys, "bob");
    const { provider: bobs } = await authorize(bob, ["write"]);
    expect((await v1Me(bobs.saved!.access_token)).status).toBe(200);
    const admin = { authorization: `Bearer ${sys.adminToken}`, "content-type": "application/json" };
    // a suspension refuses the token at once (its agent is read fresh), a reinstatement lets it in again
    const suspend = await fetch(`${sys.baseUrl}/admin/agents/${bob.agentId}/suspend`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ reason: "test" }),
    });
    expect(suspend.status).toBe(200);
    expect((await v1Me(bobs.saved!.access_token)).status).toBe(403);
    const reinstate = await fetch(`${sys.baseUrl}/admin/agents/${bob.agentId}/reinstate`, {
      method: "POST",
      headers: admin,
    });
    expect(reinstate.status).toBe(200);
    expect((await v1Me(bobs.saved!.access_token)).status).toBe(200);
    const r = await fetch(`${sys.baseUrl}/admin/agents/${bob.agentId}/keys/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${sys.adminToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(r.status).toBe(200);
    // the gateway revokes the grants on the identity event (in-process bus: promptly)
    await waitUntil(
      "the revoked agent's token is refused",
      async () => (await v1Me(bobs.saved!.access_token)).status === 401,
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect((await v1Me(bobs.saved!.access_token)).status).toBe(401);
  });
});
