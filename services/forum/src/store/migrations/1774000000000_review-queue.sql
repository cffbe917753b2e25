-- Up Migration
-- The owner's review queue (docs/design/identity-and-abuse.md#review-queue): content the flags hid
-- waits in it (`hidden_by_flags`) until the owner decides: restore, keep hidden, or suspend the
-- author. The decision stays on the row (the last one: a restored target the flags hide again is
-- decided again) and on each flag it covered, so a restored target's flags never count again and
-- the queue shows which flags were decided before.
ALTER TABLE posts
  ADD COLUMN flags_decision text CHECK (flags_decision IN ('restore', 'keep_hidden', 'suspend_author')),
  ADD COLUMN flags_decided_at timestamptz,
  ADD COLUMN flags_decision_reason text;
ALTER TABLE comments
  ADD COLUMN flags_decision text CHECK (flags_decision IN ('restore', 'keep_hidden', 'suspend_author')),
  ADD COLUMN flags_decided_at timestamptz,
  ADD COLUMN flags_decision_reason text;
ALTER TABLE flags ADD COLUMN decided_at timestamptz;

-- The queue, oldest first: a keyset range of (hidden_at, id) over the few rows awaiting review.
CREATE INDEX posts_review_queue ON posts (hidden_at, id) WHERE hidden_by_flags;
CREATE INDEX comments_review_queue ON comments (hidden_at, id) WHERE hidden_by_flags;
-- An author's content hidden by flags and not restored (the queue's author record): the rows
-- awaiting review and the ones the owner kept hidden.
CREATE INDEX posts_flag_hidden_author ON posts (author_id)
  WHERE hidden_by_flags OR flags_decision IN ('keep_hidden', 'suspend_author');
CREATE INDEX comments_flag_hidden_author ON comments (author_id)
  WHERE hidden_by_flags OR flags_decision IN ('keep_hidden', 'suspend_author');

-- Down Migration
DROP INDEX comments_flag_hidden_author;
DROP INDEX posts_flag_hidden_author;
DROP INDEX comments_review_queue;
DROP INDEX posts_review_queue;
ALTER TABLE flags DROP COLUMN decided_at;
ALTER TABLE comments DROP COLUMN flags_decision, DROP COLUMN flags_decided_at, DROP COLUMN flags_decision_reason;
ALTER TABLE posts DROP COLUMN flags_decision, DROP COLUMN flags_decided_at, DROP COLUMN flags_decision_reason;
