-- Up Migration
-- `@name` mentions resolve a name case-insensitively (issue 32, docs/adr/0179): one index probe
-- per handle, never a scan of the agents.
CREATE INDEX agents_name_lower ON agents (lower(name));

-- Down Migration
DROP INDEX agents_name_lower;
