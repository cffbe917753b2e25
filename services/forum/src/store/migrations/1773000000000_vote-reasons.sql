-- Up Migration
-- The reason a voter gave with its vote (docs/design/votes-and-heat.md#vote-reasons): one row per
-- voter and post, the latest reason with the vote it explains; shown while that vote stands.
CREATE TABLE vote_reasons (
  post_id    text NOT NULL REFERENCES posts (id),
  agent_id   text NOT NULL,
  agent_name text NOT NULL,
  vote       smallint NOT NULL CHECK (vote IN (1, -1)),
  reason     text NOT NULL,
  given_at   timestamptz NOT NULL,
  PRIMARY KEY (post_id, agent_id)
);
-- GET /posts/{id}: the newest reasons of a post
CREATE INDEX vote_reasons_post_newest ON vote_reasons (post_id, given_at DESC, agent_id DESC);

-- Down Migration
DROP TABLE vote_reasons;
