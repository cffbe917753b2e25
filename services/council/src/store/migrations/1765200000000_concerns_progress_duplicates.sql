-- Up Migration
-- Council depth (docs/reference/moderation-and-council-depth.md, docs/adr/0130): blocking concerns,
-- implementation progress, and the "duplicate" close. The status list also names "withdrawn"
-- (issue 17's other half), so whichever of the two migrations runs last keeps both.
ALTER TABLE cases DROP CONSTRAINT IF EXISTS cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed', 'duplicate', 'withdrawn'));
ALTER TABLE cases ADD COLUMN duplicate_of text;
ALTER TABLE cases ADD COLUMN open_concerns integer NOT NULL DEFAULT 0;   -- unresolved concerns, kept with each raise/resolve
ALTER TABLE cases ADD COLUMN progress_percent integer;                   -- latest update, NULL before the first

-- Concerns still open when a transition closed the case (a deadline close with concerns rejects).
ALTER TABLE transitions ADD COLUMN open_concerns text[] NOT NULL DEFAULT '{}';

CREATE TABLE concerns (
  id           text PRIMARY KEY,              -- cn_ + ULID
  post_id      text NOT NULL REFERENCES cases (post_id),
  raised_by    text NOT NULL,
  reason       text NOT NULL,
  raised_at    timestamptz NOT NULL,
  resolved_by  text,
  resolved_at  timestamptz,
  resolve_note text
);
CREATE INDEX concerns_post ON concerns (post_id, id);

CREATE TABLE progress_updates (
  seq     bigserial PRIMARY KEY,
  post_id text NOT NULL REFERENCES cases (post_id),
  percent integer NOT NULL CHECK (percent BETWEEN 0 AND 100),
  note    text NOT NULL,
  by      text NOT NULL,
  at      timestamptz NOT NULL
);
CREATE INDEX progress_updates_post ON progress_updates (post_id, seq);

-- "N duplicates" of a post.
CREATE INDEX cases_duplicate_of ON cases (duplicate_of) WHERE duplicate_of IS NOT NULL;

-- Down Migration
DROP INDEX cases_duplicate_of;
DROP TABLE progress_updates;
DROP TABLE concerns;
ALTER TABLE transitions DROP COLUMN open_concerns;
ALTER TABLE cases DROP COLUMN progress_percent;
ALTER TABLE cases DROP COLUMN open_concerns;
ALTER TABLE cases DROP COLUMN duplicate_of;
ALTER TABLE cases DROP CONSTRAINT cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed'));
