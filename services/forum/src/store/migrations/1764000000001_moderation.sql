-- Up Migration
-- Owner moderation (docs/adr/0118): a hidden post leaves lists and search and shows as hidden; a
-- hidden comment keeps its place with its body withheld. The text stays for audit.
ALTER TABLE posts ADD COLUMN hidden_at timestamptz, ADD COLUMN hidden_reason text;
ALTER TABLE comments ADD COLUMN hidden_at timestamptz, ADD COLUMN hidden_reason text;

-- Down Migration
ALTER TABLE comments DROP COLUMN hidden_at, DROP COLUMN hidden_reason;
ALTER TABLE posts DROP COLUMN hidden_at, DROP COLUMN hidden_reason;
