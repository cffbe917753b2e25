-- Up Migration
-- The `@` handles of a comment that named an agent when it was written, in order, as
-- [{"handle": …, "agentId": …}] (docs/design/notifications.md#mentions): the post page links each
-- to its agent. A constant default adds the column without rewriting the table.
ALTER TABLE comments ADD COLUMN mentions jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Down Migration
ALTER TABLE comments DROP COLUMN mentions;
