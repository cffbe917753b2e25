-- Up Migration
-- Typed links between proposals (docs/reference/council.md "Links"): declared by the author
-- before the decision; the adoption of a proposal that supersedes or replaces a decided one marks
-- that one superseded (a new case status, final).
CREATE TABLE proposal_links (
  post_id   text NOT NULL,
  type      text NOT NULL CHECK (type IN ('supersedes', 'requires', 'replaces')),
  target_id text NOT NULL,
  PRIMARY KEY (post_id, type, target_id),
  CHECK (post_id <> target_id)
);
ALTER TABLE cases ADD COLUMN superseded_by text;
ALTER TABLE cases DROP CONSTRAINT IF EXISTS cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed', 'duplicate', 'withdrawn', 'lapsed', 'superseded'));

-- Down Migration
ALTER TABLE cases DROP CONSTRAINT IF EXISTS cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed', 'duplicate', 'withdrawn', 'lapsed'));
ALTER TABLE cases DROP COLUMN superseded_by;
DROP TABLE proposal_links;
