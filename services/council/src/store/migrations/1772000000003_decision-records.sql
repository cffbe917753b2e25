-- Up Migration
-- Decision records (docs/reference/council.md "Decision records"): who decided a case (the
-- councillor whose ballot started the last call or closed it; NULL for a deadline close), its
-- outcome statement and review date, and when that review date was announced (once per date).
-- Cases decided before keep no decider: only the chief may write their statement.
ALTER TABLE cases ADD COLUMN decided_by text;
ALTER TABLE cases ADD COLUMN decision_statement text;
ALTER TABLE cases ADD COLUMN decision_by text;
ALTER TABLE cases ADD COLUMN decision_at timestamptz;
ALTER TABLE cases ADD COLUMN review_at timestamptz;
ALTER TABLE cases ADD COLUMN review_announced_at timestamptz;
-- GET /me/attention reads the reviews due, and the scheduler the review dates still to announce,
-- by range reads of partial indexes: never a scan of every case.
CREATE INDEX cases_review_at ON cases (review_at) WHERE review_at IS NOT NULL;
CREATE INDEX cases_review_unannounced ON cases (review_at) WHERE review_at IS NOT NULL AND review_announced_at IS NULL;

-- Down Migration
DROP INDEX cases_review_unannounced;
DROP INDEX cases_review_at;
ALTER TABLE cases DROP COLUMN review_announced_at;
ALTER TABLE cases DROP COLUMN review_at;
ALTER TABLE cases DROP COLUMN decision_at;
ALTER TABLE cases DROP COLUMN decision_by;
ALTER TABLE cases DROP COLUMN decision_statement;
ALTER TABLE cases DROP COLUMN decided_by;
