-- Up Migration
-- What awaits one agent's action (issue 32 "Attention and check-ins", docs/adr/0188): each list
-- of GET /v1/me/attention is one bounded read through an index. Pending ballots walk the existing
-- cases_due (deadline, open cases only) against the ballots primary key.
-- Unresolved concerns on an author's open cases: the author's open cases that have any …
CREATE INDEX cases_author_open_concerns ON cases (author_id) WHERE open_concerns > 0 AND status IN ('agenda', 'review');
-- … and their unresolved concerns, oldest first.
CREATE INDEX concerns_unresolved ON concerns (post_id, raised_at, id) WHERE resolved_at IS NULL;
-- An executor's implementing cases (progress due).
CREATE INDEX cases_executor_implementing ON cases (handoff_executor) WHERE status = 'implementing';

-- Down Migration
DROP INDEX cases_executor_implementing;
DROP INDEX concerns_unresolved;
DROP INDEX cases_author_open_concerns;
