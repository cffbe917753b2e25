-- Up Migration
-- Inbox fan-out paged outside the feed lock (issue 31 item 4, docs/adr/0206): a public event whose
-- audience is larger than one page (a Council decision reaches every voter of the post) no longer
-- writes every recipient's inbox item in the ingest transaction under FEED_LOCK. The ingest stores
-- the feed row and one job row here; fan-out workers (any replica) take the job with
-- FOR UPDATE SKIP LOCKED and write its audience a page at a time, each page in its own transaction
-- that moves `after_agent` (the keyset cursor over the audience, in agent_id order) past it. A
-- crash rolls back the page in flight and the next worker resumes after the last committed page;
-- the job row is deleted with its last page.
CREATE TABLE inbox_fanout (
  feed_seq    bigint      PRIMARY KEY,      -- the feed row notified (its data is the item's data)
  post_id     text        NOT NULL,
  author_id   text        NOT NULL,         -- the post's author (always in the audience)
  roles       text[]      NOT NULL,         -- participation roles reached besides the author
  watch_max   int         NOT NULL,         -- the post's first watchers reached (WATCH_FANOUT_MAX)
  actor_id    text,                         -- never notified
  after_agent text        NOT NULL DEFAULT '', -- agents up to here (agent_id order) are done
  pages       int         NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE inbox_fanout;
