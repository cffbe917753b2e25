-- Up Migration
-- The case's revision (docs/adr/0204): +1 in the transaction of every change of the case, which
-- publishes `council.case_summary` with it; the forum keeps the newest summary per post. A case
-- still at 0 has never been summarized (written before this release): the council publishes
-- those once at start-up, found through the partial index below (empty once done).
ALTER TABLE cases ADD COLUMN revision bigint NOT NULL DEFAULT 0;
CREATE INDEX cases_unsummarized ON cases (post_id) WHERE revision = 0;

-- Down Migration
DROP INDEX cases_unsummarized;
ALTER TABLE cases DROP COLUMN revision;
