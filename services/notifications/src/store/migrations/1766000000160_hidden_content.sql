-- Up Migration
-- Hidden means hidden (issue 30 rule 9, docs/adr/0160): the moderation state of each post or
-- comment the forum hid (forum.post_moderated, from the owner or from community flags), applied in
-- the order of the events' instants whatever order they arrive in. While `hidden`, feed rows about
-- it are stored redacted; when it becomes hidden, its stored feed rows and pending deliveries are
-- redacted in place.
CREATE TABLE hidden_content (
  target_id  text        PRIMARY KEY,            -- p_… (the post) or c_… (a comment)
  post_id    text        NOT NULL,
  hidden     boolean     NOT NULL,
  changed_at timestamptz NOT NULL                -- occurredAt of the latest moderation event applied
);

-- The feed rows of one post (redaction) and the pending deliveries of one feed row.
CREATE INDEX feed_events_post ON feed_events (post_id, seq) WHERE post_id IS NOT NULL;
CREATE INDEX webhook_deliveries_pending_feed ON webhook_deliveries (feed_seq) WHERE status = 'pending';
