-- Up Migration
-- A case whose deadline passes with no Council ballot closes as `lapsed`: not a Council outcome,
-- no Sagacity, final (issue 30 rule 3, docs/adr/0156).
ALTER TABLE cases DROP CONSTRAINT IF EXISTS cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed', 'duplicate', 'withdrawn', 'lapsed'));

-- Down Migration
ALTER TABLE cases DROP CONSTRAINT cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed', 'duplicate', 'withdrawn'));
