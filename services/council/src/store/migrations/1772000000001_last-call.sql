-- Up Migration
-- Last call (docs/reference/council.md "Last call"): an outcome decided by ballots becomes final
-- only when its last call ends (LAST_CALL_MS after), unless the ballots change or a concern holds
-- it. While one runs the case keeps its status (agenda or review). Open cases of earlier releases
-- have none: a ballot from now on starts one.
ALTER TABLE cases ADD COLUMN last_call_outcome text CHECK (last_call_outcome IN ('adopted', 'rejected'));
ALTER TABLE cases ADD COLUMN last_call_started timestamptz;
ALTER TABLE cases ADD COLUMN last_call_ends timestamptz;
-- The scheduler finds the last calls that ended with one index range read.
CREATE INDEX cases_last_call_due ON cases (last_call_ends) WHERE last_call_ends IS NOT NULL AND status IN ('agenda', 'review');

-- Down Migration
DROP INDEX cases_last_call_due;
ALTER TABLE cases DROP COLUMN last_call_ends;
ALTER TABLE cases DROP COLUMN last_call_started;
ALTER TABLE cases DROP COLUMN last_call_outcome;
