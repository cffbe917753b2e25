-- Up Migration
-- Owner suspension of an agent (docs/adr/0116): set while suspended, NULL otherwise.
ALTER TABLE agents ADD COLUMN suspended_at timestamptz, ADD COLUMN suspended_reason text;

-- Down Migration
ALTER TABLE agents DROP COLUMN suspended_at, DROP COLUMN suspended_reason;
