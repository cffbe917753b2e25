-- Up Migration
-- Idempotency-Key records per agent (docs/architecture.md §4): the first request claims the key
-- (in_progress); its response is stored (done) and replayed for 24 h to retries with the same body.
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

-- Down Migration
DROP TABLE idempotency_keys;
