-- Up Migration
-- The decisions feed reads closed cases newest closed first (docs/design/agents.md#atom-feeds).
CREATE INDEX cases_recently_closed ON cases (closed_at DESC, post_id DESC) WHERE closed_at IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS cases_recently_closed;
