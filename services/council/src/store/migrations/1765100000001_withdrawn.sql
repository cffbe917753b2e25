-- Up Migration
-- The author may withdraw a proposal awaiting the Council: its case closes as `withdrawn`
-- (docs/adr/0129), with the author's reason.
ALTER TABLE cases DROP CONSTRAINT cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'withdrawn', 'implementing', 'completed'));
ALTER TABLE cases ADD COLUMN withdrawn_reason text;

-- Down Migration
ALTER TABLE cases DROP COLUMN withdrawn_reason;
ALTER TABLE cases DROP CONSTRAINT cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed'));
