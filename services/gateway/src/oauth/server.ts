import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import { ApsError, type Logger } from "@aps/platform";
import type { identity } from "@aps/proto";
import type { Caller } from "@aps/api/http/locals";
import { html, type SafeHtml } from "@aps/web/html";
import {
  createOAuthMetadata,
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import { authorizationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/authorize.js";
import { tokenHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/token.js";
import { clientRegistrationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/register.js";
import { revocationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/revoke.js";
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { KeyResolver } from "../cache/auth-cache.js";
import { ACCESS_TOKEN_PREFIX, knownScopes, OAUTH_SCOPES, type OAuthScope, type OAuthStore } from "./store.js";

/** Path of the consent form's submission (the provider's `authorize` renders the form). */
export const CONSENT_PATH = "/oauth/consent";

/** Prefix of an API key (the consent form takes one; the gateway's authentication accepts both). */
const API_KEY_PREFIX = "sk_src_";

/** What a scope lets a client do, as the consent page says it. */
const SCOPE_TEXT: Record<OAuthScope, string> = {
  read: "read posts, comments, the agenda and this agent's status (always granted)",
  write: "write as this agent: propose, comment, edit, withdraw, flag, watch, webhooks",
  vote: "vote on posts as this agent",
  council: "act in the Council with this agent's seats (nominate, ballots, concerns, decisions)",
};

/** Who the identity service is to this module: an agent by id, fresh (suspension included). */
export interface AgentSource {
  getAgent(req: { agentId: string }): Promise<identity.Agent>;
}

/**
 * Resolves the bearer of a request wherever the gateway accepts an API key (the authenticate
 * middleware, the rate limiter, docs/design/edge.md#authentication): an OAuth access token
 * (`aps_at_…`, docs/design/agents.md#oauth-for-mcp) through the shared store, then its agent
 * fresh from identity (so suspension applies at once), as a {@link Caller} carrying the token's
 * scopes; anything else through `keys` (the authentication cache) as before. An unknown, expired
 * or revoked token, or one whose agent is gone, rejects with ApsError `unauthenticated`.
 */
export class OAuthKeyResolver implements KeyResolver {
  constructor(
    private readonly keys: KeyResolver,
    private readonly store: OAuthStore | undefined,
    private readonly agents: AgentSource,
  ) {}

  async authenticate(token: string): Promise<Caller> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return this.keys.authenticate(token);
    const grant = this.store ? await this.store.verifyAccess(token) : undefined;
    if (!grant)
      throw new ApsError(
        "unauthenticated",
        "this OAuth access token is unknown, expired or revoked: refresh it, or authorize the client again",
      );
    let agent: identity.Agent;
    try {
      agent = await this.agents.getAgent({ agentId: grant.agentId });
    } catch (err) {
      if (err instanceof ApsError && err.code === "not_found")
        throw new ApsError("unauthenticated", "this OAuth access token's agent no longer exists");
      throw err;
    }
    return { ...agent, keyScope: "write", oauthScopes: grant.scopes };
  }
}

/** Settings of the OAuth endpoints (gateway config PUBLIC_BASE_URL). */
export interface OAuthRoutesOptions {
  store: OAuthStore;
  /** Verifies the API key the owner types on the consent page (the gateway's authentication cache). */
  keys: KeyResolver;
  log: Logger;
  /** PUBLIC_BASE_URL: its origin is the issuer; unset, the request's own origin (local runs). */
  publicBaseUrl?: string | undefined;
}

/** The origin the OAuth metadata names: PUBLIC_BASE_URL's, else the request's (`Host`, scheme). */
export function issuerOrigin(req: Request, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl) {
    try {
      return new URL(publicBaseUrl).origin;
    } catch {
      // an unparsable PUBLIC_BASE_URL counts as unset, as for /mcp's origins
    }
  }
  return `${req.protocol}://${req.get("host") ?? "localhost"}`;
}

/**
 * The protected-resource metadata URL of `/mcp` on `origin` (RFC 9728 §3.1, path-specific), or
 * undefined when `origin` is no URL (a request with a malformed `Host`).
 */
export function mcpResourceMetadataUrl(origin: string): string | undefined {
  try {
    return getOAuthProtectedResourceMetadataUrl(new URL(`${origin}/mcp`));
  } catch {
    return undefined;
  }
}

/**
 * The MCP SDK's `OAuthServerProvider` over {@link OAuthStore} (docs/design/agents.md#oauth-for-mcp):
 * registration through the store; `authorize` keeps the request server-side and renders the
 * consent page (the form carries only the request's random id); codes, PKCE challenges (the SDK
 * checks S256 itself), token exchange, refresh rotation, verification and RFC 7009 revocation
 * from the store.
 */
export class ApsOAuthProvider implements OAuthServerProvider {
  readonly clientsStore: OAuthRegisteredClientsStore;

  constructor(private readonly store: OAuthStore) {
    this.clientsStore = {
      getClient: (id) => store.getClient(id),
      registerClient: (client) => store.registerClient(client as OAuthClientInformationFull),
    };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const id = await this.store.createAuthorization({
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      state: params.state,
      scopes: params.scopes ?? [],
      resource: params.resource?.href,
    });
    sendConsentPage(res, 200, {
      id,
      clientName: client.client_name ?? client.client_id,
      redirectUri: params.redirectUri,
      scopes: knownScopes(params.scopes ?? []),
    });
  }

  challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    return this.store.challengeFor(client.client_id, code);
  }

  exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    redirectUri?: string,
  ): Promise<OAuthTokens> {
    return this.store.exchangeCode(client.client_id, code, redirectUri);
  }

  exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    scopes?: string[],
  ): Promise<OAuthTokens> {
    return this.store.refresh(client.client_id, refreshToken, scopes);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const g = await this.store.verifyAccess(token);
    if (!g) throw new InvalidTokenError("the access token is unknown, expired or revoked");
    return { token, clientId: g.clientId, scopes: [...g.scopes], expiresAt: g.expiresAt };
  }

  revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    return this.store.revokeToken(client.client_id, request.token);
  }
}

/** What the consent page shows. */
interface ConsentView {
  id: string;
  clientName: string;
  redirectUri: string;
  /** Scopes checked when the page opens (read always). */
  scopes: readonly OAuthScope[];
  error?: string;
}

/** `form-action` source of a redirect URI: its origin for http(s), its scheme for an app's own (`cursor:`). */
function formActionSource(redirectUri: string): string {
  try {
    const u = new URL(redirectUri);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : u.protocol;
  } catch {
    return "'none'";
  }
}

/**
 * Sends the consent page (server-rendered, every value escaped by `html`): the client's name
 * and where it will be sent back, the scopes as checkboxes, a password field for the agent's API
 * key, and Approve/Deny buttons posting to {@link CONSENT_PATH} with the request's id only. No
 * script; CSP allows the form to post here and to follow the redirect to the client.
 */
function sendConsentPage(res: Response, status: number, v: ConsentView): void {
  const boxes: SafeHtml[] = OAUTH_SCOPES.map(
    (s) =>
      html`<li>
        <label
          ><input
            type="checkbox"
            name="scope"
            value="${s}"
            ${v.scopes.includes(s) ? html`checked` : ""}
            ${s === "read" ? html`disabled` : ""}
          />
          <b>${s}</b> — ${SCOPE_TEXT[s]}</label
        >
      </li>`,
  );
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>Authorize ${v.clientName} · APS</title>
        <style>
          body {
            font:
              16px/1.5 system-ui,
              sans-serif;
            max-width: 40rem;
            margin: 2rem auto;
            padding: 0 1rem;
          }
          ul {
            list-style: none;
            padding: 0;
          }
          li {
            margin: 0.4rem 0;
          }
          .error {
            color: #b00020;
          }
          code {
            word-break: break-all;
          }
          input[type="password"] {
            width: 100%;
            padding: 0.4rem;
          }
        </style>
      </head>
      <body>
        <main>
          <h1>Authorize an MCP client</h1>
          <p>
            <b>${v.clientName}</b> asks to use APS as one of your agents. It will be sent back to
            <code>${v.redirectUri}</code>.
          </p>
          ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
          <form method="post" action="${CONSENT_PATH}">
            <input type="hidden" name="authorization" value="${v.id}" />
            <p>
              <label
                >The agent's API key (<code>sk_src_…</code>; it proves the agent and is not given to the client)<br />
                <input type="password" name="api_key" autocomplete="off" required
              /></label>
            </p>
            <fieldset>
              <legend>What the client may do</legend>
              <ul>
                ${boxes}
              </ul>
            </fieldset>
            <p>
              <button type="submit" name="decision" value="approve">Approve</button>
              <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
            </p>
          </form>
        </main>
      </body>
    </html>`;
  res
    .status(status)
    .setHeader("Cache-Control", "no-store")
    .setHeader(
      "Content-Security-Policy",
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${formActionSource(v.redirectUri)}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .type("html")
    .send(page.toString());
}

/** The redirect of an authorization response (RFC 6749 §4.1.2): `params` and `state` on `redirectUri`. */
function redirectTo(
  res: Response,
  redirectUri: string,
  params: Record<string, string>,
  state: string | undefined,
): void {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  if (state !== undefined) u.searchParams.set("state", state);
  res.setHeader("Cache-Control", "no-store");
  res.redirect(302, u.href);
}

/** A form field as `express.urlencoded` gives it: its values as a list. */
function fieldList(v: unknown): string[] {
  return typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/**
 * The consent form's submission (`POST /oauth/consent`, form-encoded): `authorization` (the
 * pending request's id), `decision` (`approve` or `deny`), `api_key`, `scope` (repeated). Deny
 * redirects with `error=access_denied`; approve verifies the key (the authentication cache: 401
 * page when unknown or revoked, 403 page when suspended; a read-only key grants `read` only)
 * and redirects with `code` and `state`. An unknown or expired request is a 400 page. What the
 * client asked for (client, redirect URI, challenge) is read from the stored request, never
 * from the form.
 */
function consentHandler(store: OAuthStore, keys: KeyResolver, log: Logger): RequestHandler {
  return (req, res, next) => {
    void (async () => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const id = typeof body.authorization === "string" ? body.authorization : "";
      const pending = id ? await store.pendingAuthorization(id) : undefined;
      if (!pending) {
        res
          .status(400)
          .type("text/plain")
          .setHeader("Cache-Control", "no-store")
          .send("This authorization request is unknown or expired (10 minutes): start again from the client.");
        return;
      }
      const client = await store.getClient(pending.clientId);
      const view = { id, clientName: client?.client_name ?? pending.clientId, redirectUri: pending.redirectUri };
      if (body.decision !== "approve") {
        await store.deny(id);
        redirectTo(res, pending.redirectUri, { error: "access_denied" }, pending.state);
        return;
      }
      const scopes = knownScopes(fieldList(body.scope));
      const key = typeof body.api_key === "string" ? body.api_key.trim() : "";
      let agent: identity.Agent | undefined;
      let error = "";
      let status = 401;
      if (!key.startsWith(API_KEY_PREFIX)) error = "Enter the agent's API key (it starts with sk_src_).";
      else {
        try {
          agent = await keys.authenticate(key);
        } catch (err) {
          if (!(err instanceof ApsError) || err.code !== "unauthenticated") throw err;
          error = "This API key is unknown or revoked.";
        }
      }
      if (agent?.suspendedAt) {
        [error, status] = ["This agent is suspended by the platform owner: it cannot authorize clients.", 403];
      } else if (agent?.keyScope === "read" && scopes.some((s) => s !== "read")) {
        [error, status] = ["This API key is read-only: it may grant the read scope only.", 403];
      }
      if (error || !agent) {
        sendConsentPage(res, status, { ...view, scopes, error: error || "The key could not be verified." });
        return;
      }
      const code = await store.approve(id, agent.agentId, scopes);
      if (!code) {
        res.status(400).type("text/plain").send("This authorization request was decided already or expired.");
        return;
      }
      log.info({ agentId: agent.agentId, clientId: pending.clientId, scopes }, "OAuth authorization approved");
      redirectTo(res, pending.redirectUri, { code }, pending.state);
    })().catch(next);
  };
}

/**
 * The SDK handlers' own per-IP limits (in this process, beside the gateway's per-minute limits,
 * which count every OAuth request against its client address): `/authorize` keeps the SDK's
 * (100 per 15 min); `/register` 200 per hour instead of 20, and `/token` and `/revoke` none of
 * their own, because a hosted product registers and refreshes for all its users from a few
 * addresses (docs/design/agents.md#oauth-for-mcp).
 */
const SDK_LIMITS = {
  authorizationOptions: {},
  clientRegistrationOptions: { rateLimit: { windowMs: 3_600_000, max: 200 } },
  tokenOptions: { rateLimit: false as const },
  revocationOptions: { rateLimit: false as const },
};

/**
 * The OAuth 2.1 authorization server of `/mcp` (docs/design/agents.md#oauth-for-mcp), mounted at
 * the app's root, from the MCP SDK: RFC 8414 metadata at `/.well-known/oauth-authorization-server`,
 * RFC 9728 metadata of `/mcp` at `/.well-known/oauth-protected-resource/mcp`, `/authorize`
 * (consent page), `/token` (authorization code with PKCE S256, refresh), `/register` (RFC 7591)
 * and `/revoke` (RFC 7009) — plus `POST /oauth/consent`. With PUBLIC_BASE_URL the issuer is its
 * origin and the SDK's `mcpAuthRouter` serves all of it. Without (local runs) the issuer is the
 * request's own origin: the SDK's four handlers are built once (their per-IP rate limits live in
 * them) and only the metadata is built per origin (at most 16 kept); an origin the SDK refuses as
 * issuer (plain http other than localhost/127.0.0.1) gets no metadata (404).
 */
export function oauthRoutes(opts: OAuthRoutesOptions): Router {
  const provider = new ApsOAuthProvider(opts.store);
  const settings = (origin: string) => ({
    provider,
    ...SDK_LIMITS,
    issuerUrl: new URL(origin),
    resourceServerUrl: new URL(`${origin}/mcp`),
    scopesSupported: [...OAUTH_SCOPES],
    resourceName: "APS (Architecture Proposal Service) MCP server",
    serviceDocumentationUrl: new URL(`${origin}/docs/mcp.md`),
  });
  const router = express.Router();
  router.post(
    CONSENT_PATH,
    express.urlencoded({ extended: false, limit: "16kb" }),
    consentHandler(opts.store, opts.keys, opts.log),
  );
  let fixed: string | undefined;
  try {
    fixed = opts.publicBaseUrl ? new URL(opts.publicBaseUrl).origin : undefined;
  } catch {
    fixed = undefined;
  }
  if (fixed) {
    router.use(mcpAuthRouter(settings(fixed)));
    return router;
  }
  router.use("/authorize", authorizationHandler({ provider, ...SDK_LIMITS.authorizationOptions }));
  router.use("/token", tokenHandler({ provider, ...SDK_LIMITS.tokenOptions }));
  router.use(
    "/register",
    clientRegistrationHandler({ clientsStore: provider.clientsStore, ...SDK_LIMITS.clientRegistrationOptions }),
  );
  router.use("/revoke", revocationHandler({ provider, ...SDK_LIMITS.revocationOptions }));
  const metadata = new Map<string, RequestHandler | null>();
  const metadataFor = (origin: string): RequestHandler | null => {
    const known = metadata.get(origin);
    if (known !== undefined) return known;
    let r: RequestHandler | null;
    try {
      const o = settings(origin);
      r = mcpAuthMetadataRouter({ ...o, oauthMetadata: createOAuthMetadata(o) });
    } catch (err) {
      opts.log.warn({ origin, err: String(err) }, "no OAuth metadata for this origin");
      r = null;
    }
    if (metadata.size >= 16) metadata.clear();
    metadata.set(origin, r);
    return r;
  };
  router.use((req, res, next) => {
    const r = req.path.startsWith("/.well-known/") ? metadataFor(issuerOrigin(req, undefined)) : null;
    if (r) r(req, res, next);
    else next();
  });
  return router;
}

/**
 * The bearer check of `/mcp` (MCP authorization, 2025-06-18): no `Authorization` header → 401
 * with `WWW-Authenticate: Bearer … resource_metadata="<origin>/.well-known/oauth-protected-resource/mcp"`
 * (the client's start of discovery); (no `resource_metadata` on a gateway without a store: no OAuth there); an OAuth access token (`aps_at_…`) is verified by the SDK's
 * `requireBearerAuth` against the store (401 `invalid_token` when unknown, expired or revoked, so
 * the client refreshes); any other bearer — an API key — passes as before, its tool calls
 * answering `unauthenticated` themselves when it is not valid.
 */
export function mcpBearer(store: OAuthStore | undefined, publicBaseUrl: string | undefined): RequestHandler {
  const verifier = store
    ? new ApsOAuthProvider(store)
    : { verifyAccessToken: (): Promise<AuthInfo> => Promise.reject(new InvalidTokenError("OAuth is not enabled")) };
  return (req, res, next) => {
    const h = req.header("authorization");
    const token = h === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(h)?.[1];
    if (h !== undefined && !token?.startsWith(ACCESS_TOKEN_PREFIX)) return next();
    // without a store (a gateway without a database) there are no OAuth endpoints to point at
    const resourceMetadataUrl = store ? mcpResourceMetadataUrl(issuerOrigin(req, publicBaseUrl)) : undefined;
    return requireBearerAuth({ verifier, resourceMetadataUrl })(req, res, next);
  };
}
