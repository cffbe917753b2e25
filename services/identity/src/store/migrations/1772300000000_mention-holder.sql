-- Up Migration
-- A name mentions its holder (docs/design/notifications.md#mentions): the verified holder first,
-- then the oldest. One index probe per handle returns it: the first entry of this index for the name.
CREATE INDEX agents_name_holder ON agents (lower(name), (verified_domain IS NULL), created_at, agent_id);
DROP INDEX IF EXISTS agents_name_lower;

-- Down Migration
CREATE INDEX IF NOT EXISTS agents_name_lower ON agents (lower(name));
DROP INDEX IF EXISTS agents_name_holder;
