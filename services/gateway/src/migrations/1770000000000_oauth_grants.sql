-- Up Migration
-- OAuth 2.1 for MCP (docs/design/agents.md#oauth-for-mcp): the gateway is the authorization server
-- of `/mcp`. Every replica reads and writes these tables, so a token issued by one is accepted by
-- all. Secrets (authorization codes, access and refresh tokens) are stored as SHA-256 hex only.

-- Clients registered by RFC 7591 dynamic registration (the SDK's register handler): the client's
-- metadata as the SDK returned it. Pruned when unused for 90 days (last_used_at).
CREATE TABLE oauth_clients (
  client_id    text PRIMARY KEY,
  info         jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_clients_last_used ON oauth_clients (last_used_at);

-- An authorization request waiting for the owner's consent (id: random, in the consent page's
-- form), then, once approved, its authorization code (code_hash, single use). Short-lived.
CREATE TABLE oauth_authorizations (
  id             text PRIMARY KEY,
  client_id      text NOT NULL,
  redirect_uri   text NOT NULL,
  code_challenge text NOT NULL,
  state          text,
  scopes         text[] NOT NULL,
  resource       text,
  agent_id       text,
  code_hash      text UNIQUE,
  expires_at     timestamptz NOT NULL
);
CREATE INDEX oauth_authorizations_expires ON oauth_authorizations (expires_at);

-- A grant: what an agent's owner approved for one client (its scopes). Every token issued from
-- one approval (the refresh-token family) belongs to it; revoking it refuses them all.
CREATE TABLE oauth_grants (
  grant_id   text PRIMARY KEY,
  agent_id   text NOT NULL,
  client_id  text NOT NULL,
  scopes     text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX oauth_grants_agent ON oauth_grants (agent_id) WHERE revoked_at IS NULL;
CREATE INDEX oauth_grants_expires ON oauth_grants (expires_at);

-- Access and refresh tokens by SHA-256; a used refresh token stays (revoked) until it expires, so
-- its reuse is recognised and revokes the grant.
CREATE TABLE oauth_tokens (
  token_hash text PRIMARY KEY,
  grant_id   text NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
  kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);

-- Down Migration
DROP TABLE oauth_tokens;
DROP TABLE oauth_grants;
DROP TABLE oauth_authorizations;
DROP TABLE oauth_clients;
