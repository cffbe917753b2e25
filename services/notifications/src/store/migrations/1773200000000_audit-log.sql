-- Up Migration
-- The audit log (docs/design/identity-and-abuse.md#audit-log): every owner and Council action,
-- built by one consumer from the domain events the actions commit with (store/audit.ts). One
-- chain: entry `seq` stores hash = sha256(prev_hash || canonical JSON of the entry); appends are
-- serialised by the single-row chain head, taken FOR UPDATE in the appending transaction, so N
-- replicas never fork it. Append-only: the trigger below refuses UPDATE, DELETE and TRUNCATE of
-- the log to everyone, the service's own role included (a superuser who goes around it is caught
-- by the chain: `aps audit verify`). Kept, never pruned (docs/retention.md).
CREATE TABLE audit_log (
  seq         bigint      PRIMARY KEY,          -- 1, 2, 3 … without gaps
  source_id   text        NOT NULL UNIQUE,      -- the event id (or the append's key): a redelivery appends nothing
  at          timestamptz NOT NULL,             -- when the action happened (the event's occurred_at)
  actor       text        NOT NULL,             -- agent id, 'owner' or 'system'
  action      text        NOT NULL,
  target_type text        NOT NULL,
  target_id   text        NOT NULL,
  before      jsonb       NOT NULL,
  after       jsonb       NOT NULL,
  reason      text        NOT NULL DEFAULT '',
  visibility  text        NOT NULL CHECK (visibility IN ('public', 'private')),
  sealed      boolean     NOT NULL DEFAULT false,
  prev_hash   text        NOT NULL,
  hash        text        NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now() -- when it was appended (not hashed)
);
-- the reads: public entries newest first, and both lists filtered by target or actor
CREATE INDEX audit_log_public ON audit_log (seq) WHERE visibility = 'public';
CREATE INDEX audit_log_target ON audit_log (target_id, seq);
CREATE INDEX audit_log_actor ON audit_log (actor, seq);

-- The head of the chain: the last seq and its hash. One row, updated by every append.
CREATE TABLE audit_chain_head (
  one  boolean PRIMARY KEY DEFAULT true CHECK (one),
  seq  bigint  NOT NULL,
  hash text    NOT NULL
);
INSERT INTO audit_chain_head (one, seq, hash) VALUES (true, 0, repeat('0', 64));

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- Down Migration
DROP TABLE audit_chain_head;
DROP TABLE audit_log;
DROP FUNCTION audit_log_append_only();
