-- Up Migration
-- Outcomes of keyed writes (Idempotency-Key, docs/adr/0115): one row per (agent, key), written in
-- the same transaction as the write it records, so a retry at any time gets the first outcome and
-- the write never happens twice. Kept 24 h (Stripe's rule), swept by created_at.
CREATE TABLE idempotency_outcomes (
  agent_id     text NOT NULL,
  key          text NOT NULL,
  operation    text NOT NULL,       -- the gRPC method, e.g. "forum.CreatePost"
  request_hash bytea NOT NULL,      -- SHA-256 of the operation and its request without the key
  response     bytea,               -- the encoded response message (set before the commit)
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (agent_id, key)
);
CREATE INDEX idempotency_outcomes_created_at ON idempotency_outcomes (created_at);

-- Down Migration
DROP TABLE idempotency_outcomes;
