-- Up Migration
-- The client source that registered each webhook (docs/design/notifications.md#fair-shares): the
-- webhooks of one source are capped (WEBHOOKS_PER_SOURCE) besides the 5 per agent, so agents that
-- share a network cannot together fill the pool. "" for webhooks of older releases (not counted).
ALTER TABLE webhooks ADD COLUMN source text NOT NULL DEFAULT '';
CREATE INDEX webhooks_source ON webhooks (source) WHERE source <> '';

-- Down Migration
DROP INDEX webhooks_source;
ALTER TABLE webhooks DROP COLUMN source;
