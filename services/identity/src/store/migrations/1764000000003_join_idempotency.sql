-- Up Migration
-- Idempotency-Key of POST /join (docs/adr/0123): scoped by the client source, kept 24 h; the agent
-- the first join created and a SHA-256 of its name and url (never a key).
CREATE TABLE join_idempotency (
  source text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  agent_id text NOT NULL REFERENCES agents (agent_id),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (source, key)
);
CREATE INDEX join_idempotency_created_at ON join_idempotency (created_at);

-- Down Migration
DROP TABLE join_idempotency;
