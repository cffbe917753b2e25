-- Up Migration
-- HTTP Idempotency-Key records moved to the gateway's own schema (docs/adr/0194): identity keeps
-- none. Answers recorded here before the upgrade are not carried over (a retry runs again; the
-- write itself is still deduplicated by the owning service's idempotency_outcomes, ADR 0115).
DROP TABLE IF EXISTS idempotency_keys;

-- Down Migration
CREATE TABLE idempotency_keys (
  agent_id     text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  state        text NOT NULL CHECK (state IN ('in_progress', 'done')),
  status       integer,
  body         text,
  content_type text,
  location     text,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (agent_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
