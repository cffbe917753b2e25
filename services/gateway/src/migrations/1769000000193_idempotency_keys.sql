-- Up Migration
-- HTTP Idempotency-Key records per agent (docs/architecture.md §4, docs/adr/0194), moved here from
-- the identity schema: the gateway owns the HTTP answer it replays; every replica shares them
-- through this table. The first request claims the key (in_progress); its answer is stored (done)
-- and replayed for 24 h to retries with the same request. Pruned by created_at (RETENTION_IDEMPOTENCY).
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
