import { createHash, randomBytes } from "node:crypto";
import { withTransaction, type Database } from "@aps/platform";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { InvalidGrantError, InvalidScopeError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

/**
 * The scopes an OAuth grant may hold (docs/design/agents.md#oauth-for-mcp): `read` (GET and HEAD,
 * which every token may make), `write` (every write but votes and Council actions), `vote`
 * (`POST /posts/{id}/vote`) and `council` (the Council's writes).
 */
export const OAUTH_SCOPES = ["read", "write", "vote", "council"] as const;
/** One of {@link OAUTH_SCOPES}. */
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** Prefix of an OAuth access token (docs/design/agents.md#oauth-for-mcp), beside API keys' `sk_src_`. */
export const ACCESS_TOKEN_PREFIX = "aps_at_";
/** Prefix of an OAuth refresh token. */
export const REFRESH_TOKEN_PREFIX = "aps_rt_";
/** Prefix of an authorization code. */
export const CODE_PREFIX = "aps_ac_";

/** How long the consent page of an authorization request stays usable, ms. */
export const CONSENT_TTL_MS = 10 * 60_000;
/** How long an authorization code may be exchanged, ms (single use). */
export const CODE_TTL_MS = 60_000;

/** Lifetimes and bounds of the store (gateway config OAUTH_ACCESS_TOKEN_TTL_S, OAUTH_REFRESH_TOKEN_TTL_S, OAUTH_GRANTS_PER_AGENT). */
export interface OAuthStoreOptions {
  /** Lifetime of an access token, s. */
  accessTtlS: number;
  /** Lifetime of a refresh token, s; each refresh issues a new one with a fresh lifetime. */
  refreshTtlS: number;
  /** Live grants an agent may hold; a new approval beyond revokes its oldest. */
  grantsPerAgent: number;
}

/** An authorization request waiting for consent: what the consent page shows and the approval uses. */
export interface PendingAuthorization {
  id: string;
  clientId: string;
  redirectUri: string;
  state: string | undefined;
  /** The scopes the client asked for (unknown ones dropped). */
  scopes: OAuthScope[];
}

/** What a valid access token stands for. */
export interface AccessGrant {
  agentId: string;
  clientId: string;
  grantId: string;
  scopes: OAuthScope[];
  /** Expiry of the access token, s since the epoch. */
  expiresAt: number;
}

/** A grant as the agent sees it (listing its grants). */
export interface GrantSummary {
  grantId: string;
  clientId: string;
  clientName: string;
  scopes: OAuthScope[];
  createdAt: string;
  expiresAt: string;
}

/** SHA-256 hex of a secret: what the tables keep of codes and tokens. */
export function secretHash(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A random secret with `prefix` (256 bits, base64url). */
function secret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/** The known scopes among `scopes`, in {@link OAUTH_SCOPES} order, `read` always included. */
export function knownScopes(scopes: readonly string[]): OAuthScope[] {
  return OAUTH_SCOPES.filter((s) => s === "read" || scopes.includes(s));
}

interface TokenRow {
  grant_id: string;
  agent_id: string;
  client_id: string;
  scopes: string[];
  token_revoked: boolean;
  token_live: boolean;
  grant_live: boolean;
}

/**
 * The OAuth authorization server's state in the gateway's PostgreSQL schema (migration
 * `oauth_grants`, docs/design/agents.md#oauth-for-mcp), shared by every replica: registered
 * clients (RFC 7591), pending authorizations and their single-use codes, grants and their access
 * and refresh tokens. Codes and tokens are stored as SHA-256 only. Refresh tokens rotate: each
 * use revokes it and issues a new pair; presenting a revoked refresh token again revokes the
 * whole grant (OAuth 2.1 §4.3.1, refresh token reuse). Errors the token endpoint reports are the
 * SDK's `OAuthError`s (`invalid_grant`, `invalid_scope`).
 */
export class OAuthStore {
  constructor(
    private readonly pool: Database["pool"],
    readonly opts: OAuthStoreOptions,
  ) {}

  /** Stores a client the SDK's register handler built (its id and secret generated there). */
  async registerClient(info: OAuthClientInformationFull): Promise<OAuthClientInformationFull> {
    await this.pool.query("INSERT INTO oauth_clients (client_id, info) VALUES ($1, $2)", [
      info.client_id,
      JSON.stringify(info),
    ]);
    return info;
  }

  /** A registered client, or undefined. */
  async getClient(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    const r = await this.pool.query<{ info: OAuthClientInformationFull }>(
      "SELECT info FROM oauth_clients WHERE client_id = $1",
      [clientId],
    );
    return r.rows[0]?.info;
  }

  /** Keeps a pending authorization for CONSENT_TTL_MS; answers its random id (the consent form's). */
  async createAuthorization(a: {
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    state: string | undefined;
    scopes: readonly string[];
    resource: string | undefined;
  }): Promise<string> {
    const id = randomBytes(24).toString("base64url");
    await this.pool.query(
      `INSERT INTO oauth_authorizations (id, client_id, redirect_uri, code_challenge, state, scopes, resource, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
      [
        id,
        a.clientId,
        a.redirectUri,
        a.codeChallenge,
        a.state ?? null,
        knownScopes(a.scopes),
        a.resource ?? null,
        CONSENT_TTL_MS / 1000,
      ],
    );
    return id;
  }

  /** A pending (unexpired, not yet decided) authorization by id, or undefined. */
  async pendingAuthorization(id: string): Promise<PendingAuthorization | undefined> {
    const r = await this.pool.query<{
      client_id: string;
      redirect_uri: string;
      state: string | null;
      scopes: string[];
    }>(
      `SELECT client_id, redirect_uri, state, scopes FROM oauth_authorizations
       WHERE id = $1 AND agent_id IS NULL AND expires_at > now()`,
      [id],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    return {
      id,
      clientId: row.client_id,
      redirectUri: row.redirect_uri,
      state: row.state ?? undefined,
      scopes: knownScopes(row.scopes),
    };
  }

  /**
   * Approves a pending authorization for `agentId` with `scopes` (read always added): answers the
   * authorization code (valid CODE_TTL_MS, single use), or undefined when the request is no
   * longer pending (expired, or decided already).
   */
  async approve(id: string, agentId: string, scopes: readonly string[]): Promise<string | undefined> {
    const code = secret(CODE_PREFIX);
    const r = await this.pool.query(
      `UPDATE oauth_authorizations SET agent_id = $2, scopes = $3, code_hash = $4,
         expires_at = now() + make_interval(secs => $5)
       WHERE id = $1 AND agent_id IS NULL AND expires_at > now()`,
      [id, agentId, knownScopes(scopes), secretHash(code), CODE_TTL_MS / 1000],
    );
    return r.rowCount === 1 ? code : undefined;
  }

  /** Forgets a pending authorization (denied). */
  async deny(id: string): Promise<void> {
    await this.pool.query("DELETE FROM oauth_authorizations WHERE id = $1 AND agent_id IS NULL", [id]);
  }

  /** The PKCE challenge of an unexpired code issued to `clientId`; `invalid_grant` otherwise. */
  async challengeFor(clientId: string, code: string): Promise<string> {
    const r = await this.pool.query<{ code_challenge: string }>(
      `SELECT code_challenge FROM oauth_authorizations
       WHERE code_hash = $1 AND client_id = $2 AND expires_at > now()`,
      [secretHash(code), clientId],
    );
    const row = r.rows[0];
    if (!row) throw new InvalidGrantError("the authorization code is unknown, used or expired");
    return row.code_challenge;
  }

  /**
   * Exchanges a code (PKCE checked by the SDK before) for the first token pair of a new grant.
   * The code is consumed whatever happens next; a `redirectUri` given must be the authorization's.
   * An agent at OAUTH_GRANTS_PER_AGENT live grants loses its oldest.
   */
  async exchangeCode(clientId: string, code: string, redirectUri: string | undefined): Promise<OAuthTokens> {
    return withTransaction(this.pool, async (tx) => {
      const r = await tx.query<{ agent_id: string; scopes: string[]; redirect_uri: string }>(
        `DELETE FROM oauth_authorizations WHERE code_hash = $1 AND client_id = $2 AND expires_at > now()
         RETURNING agent_id, scopes, redirect_uri`,
        [secretHash(code), clientId],
      );
      const row = r.rows[0];
      if (!row) throw new InvalidGrantError("the authorization code is unknown, used or expired");
      if (redirectUri !== undefined && redirectUri !== row.redirect_uri)
        throw new InvalidGrantError("redirect_uri differs from the authorization request's");
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('aps-oauth-agent:' || $1))", [row.agent_id]);
      const live = await tx.query<{ grant_id: string }>(
        `SELECT grant_id FROM oauth_grants WHERE agent_id = $1 AND revoked_at IS NULL AND expires_at > now()
         ORDER BY created_at DESC`,
        [row.agent_id],
      );
      const over = live.rows.slice(this.opts.grantsPerAgent - 1).map((g) => g.grant_id);
      if (over.length > 0)
        await tx.query("UPDATE oauth_grants SET revoked_at = now() WHERE grant_id = ANY($1)", [over]);
      const grantId = `og_${randomBytes(12).toString("base64url")}`;
      await tx.query(
        `INSERT INTO oauth_grants (grant_id, agent_id, client_id, scopes, created_at, expires_at)
         VALUES ($1, $2, $3, $4, now(), now() + make_interval(secs => $5))`,
        [grantId, row.agent_id, clientId, row.scopes, this.opts.refreshTtlS],
      );
      await tx.query("UPDATE oauth_clients SET last_used_at = now() WHERE client_id = $1", [clientId]);
      return this.issue(tx, grantId, knownScopes(row.scopes));
    });
  }

  /**
   * Rotates a refresh token: revokes it and issues a new pair of the same grant. `scopes`, when
   * given, must be among the grant's (`invalid_scope`); the new tokens carry the grant's scopes.
   * A refresh token used before (revoked) revokes its grant and every token of it; an unknown,
   * expired or revoked-grant token, or one of another client, is `invalid_grant`.
   */
  async refresh(clientId: string, refreshToken: string, scopes?: readonly string[]): Promise<OAuthTokens> {
    const outcome = await withTransaction(this.pool, async (tx) => {
      const r = await tx.query<TokenRow>(
        `SELECT t.grant_id, g.agent_id, g.client_id, g.scopes,
                t.revoked_at IS NOT NULL AS token_revoked, t.expires_at > now() AS token_live,
                g.revoked_at IS NULL AND g.expires_at > now() AS grant_live
         FROM oauth_tokens t JOIN oauth_grants g USING (grant_id)
         WHERE t.token_hash = $1 AND t.kind = 'refresh' FOR UPDATE OF t`,
        [secretHash(refreshToken)],
      );
      const row = r.rows[0];
      if (!row || row.client_id !== clientId) return "unknown" as const;
      if (row.token_revoked) {
        // reuse of a rotated refresh token: someone else holds the family; end it
        await tx.query("UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, now()) WHERE grant_id = $1", [
          row.grant_id,
        ]);
        return "reused" as const;
      }
      if (!row.token_live || !row.grant_live) return "unknown" as const;
      const granted = knownScopes(row.scopes);
      if (scopes && scopes.some((s) => !(granted as string[]).includes(s))) return "scope" as const;
      await tx.query("UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = $1", [secretHash(refreshToken)]);
      await tx.query("UPDATE oauth_grants SET expires_at = now() + make_interval(secs => $2) WHERE grant_id = $1", [
        row.grant_id,
        this.opts.refreshTtlS,
      ]);
      return this.issue(tx, row.grant_id, granted);
    });
    if (outcome === "unknown") throw new InvalidGrantError("the refresh token is unknown, expired or revoked");
    if (outcome === "reused")
      throw new InvalidGrantError("the refresh token was used already: its grant is revoked; authorize again");
    if (outcome === "scope") throw new InvalidScopeError("a requested scope is not in the grant");
    return outcome;
  }

  /** What a live access token stands for, or undefined (unknown, expired, revoked, or its grant revoked). */
  async verifyAccess(token: string): Promise<AccessGrant | undefined> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
    const r = await this.pool.query<{
      grant_id: string;
      agent_id: string;
      client_id: string;
      scopes: string[];
      exp: string;
    }>(
      `SELECT g.grant_id, g.agent_id, g.client_id, g.scopes, extract(epoch FROM t.expires_at)::bigint AS exp
       FROM oauth_tokens t JOIN oauth_grants g USING (grant_id)
       WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > now()
         AND g.revoked_at IS NULL`,
      [secretHash(token)],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    return {
      agentId: row.agent_id,
      clientId: row.client_id,
      grantId: row.grant_id,
      scopes: knownScopes(row.scopes),
      expiresAt: Number(row.exp),
    };
  }

  /**
   * RFC 7009 revocation by `clientId`: an access or refresh token of one of its grants revokes
   * that whole grant (every token issued from the approval). Anything else is ignored, as the RFC
   * asks (the endpoint answers 200 either way).
   */
  async revokeToken(clientId: string, token: string): Promise<void> {
    await this.pool.query(
      `UPDATE oauth_grants g SET revoked_at = now()
       FROM oauth_tokens t WHERE t.token_hash = $1 AND t.grant_id = g.grant_id AND g.client_id = $2
         AND g.revoked_at IS NULL`,
      [secretHash(token), clientId],
    );
  }

  /** The agent's live grants, newest first. */
  async listGrants(agentId: string): Promise<GrantSummary[]> {
    const r = await this.pool.query<{
      grant_id: string;
      client_id: string;
      info: OAuthClientInformationFull | null;
      scopes: string[];
      created_at: Date;
      expires_at: Date;
    }>(
      `SELECT g.grant_id, g.client_id, c.info, g.scopes, g.created_at, g.expires_at
       FROM oauth_grants g LEFT JOIN oauth_clients c USING (client_id)
       WHERE g.agent_id = $1 AND g.revoked_at IS NULL AND g.expires_at > now() ORDER BY g.created_at DESC`,
      [agentId],
    );
    return r.rows.map((g) => ({
      grantId: g.grant_id,
      clientId: g.client_id,
      clientName: g.info?.client_name ?? "",
      scopes: knownScopes(g.scopes),
      createdAt: g.created_at.toISOString(),
      expiresAt: g.expires_at.toISOString(),
    }));
  }

  /** Revokes one of the agent's grants; false when it has no such live grant. */
  async revokeGrant(agentId: string, grantId: string): Promise<boolean> {
    const r = await this.pool.query(
      "UPDATE oauth_grants SET revoked_at = now() WHERE grant_id = $1 AND agent_id = $2 AND revoked_at IS NULL",
      [grantId, agentId],
    );
    return r.rowCount === 1;
  }

  /** Revokes every grant of an agent (its keys were revoked by the owner); answers how many. */
  async revokeAgent(agentId: string): Promise<number> {
    const r = await this.pool.query(
      "UPDATE oauth_grants SET revoked_at = now() WHERE agent_id = $1 AND revoked_at IS NULL",
      [agentId],
    );
    return r.rowCount ?? 0;
  }

  /** Issues an access and a refresh token of `grantId` inside `tx`; the token endpoint's answer. */
  private async issue(
    tx: { query: Database["pool"]["query"] },
    grantId: string,
    scopes: OAuthScope[],
  ): Promise<OAuthTokens> {
    const access = secret(ACCESS_TOKEN_PREFIX);
    const refresh = secret(REFRESH_TOKEN_PREFIX);
    await tx.query(
      `INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at) VALUES
         ($1, $3, 'access', now() + make_interval(secs => $4)),
         ($2, $3, 'refresh', now() + make_interval(secs => $5))`,
      [secretHash(access), secretHash(refresh), grantId, this.opts.accessTtlS, this.opts.refreshTtlS],
    );
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: this.opts.accessTtlS,
      refresh_token: refresh,
      scope: scopes.join(" "),
    };
  }
}

/**
 * The retention rules of these tables (docs/design/operations.md#retention), for the gateway's
 * RetentionJob: authorizations and codes once expired, tokens a day after they expired (a used
 * refresh token is kept until then, for reuse detection), grants a day after they expired (a revoked one
 * too: its refresh token's lifetime bounds it; its tokens go with it), clients unused for 90 days.
 */
export const OAUTH_RETENTION = [
  { table: "oauth_authorizations", column: "expires_at", olderThanMs: 0 },
  { table: "oauth_tokens", column: "expires_at", olderThanMs: 24 * 3_600_000 },
  { table: "oauth_grants", column: "expires_at", olderThanMs: 24 * 3_600_000 },
  { table: "oauth_clients", column: "last_used_at", olderThanMs: 90 * 24 * 3_600_000 },
] as const;
