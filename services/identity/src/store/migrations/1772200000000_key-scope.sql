-- Up Migration
-- Read-only API keys (docs/reference/http.md "Read-only keys"): a key's scope. Every key issued
-- before is a write key, as it was; a rotation keeps the scope of the key it replaces.
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'write' CHECK (scope IN ('write', 'read'));
-- live read keys of an agent are counted at each creation (at most MAX_READ_KEYS)
CREATE INDEX api_keys_live_read ON api_keys (agent_id) WHERE scope = 'read' AND revoked_at IS NULL;

-- Down Migration
DROP INDEX IF EXISTS api_keys_live_read;
ALTER TABLE api_keys DROP COLUMN IF EXISTS scope;
