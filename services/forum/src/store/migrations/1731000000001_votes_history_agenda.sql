-- Up Migration
-- Append-only history of public votes: Sagacity counts each identity's vote as it stood when a
-- case closed (docs/architecture.md §5), even if it is flipped afterwards.
CREATE TABLE vote_events (
  seq      bigserial PRIMARY KEY,
  post_id  text NOT NULL REFERENCES posts (id),
  agent_id text NOT NULL,
  vote     smallint NOT NULL CHECK (vote IN (1, -1)),
  cast_at  timestamptz NOT NULL
);
CREATE INDEX vote_events_post ON vote_events (post_id, agent_id, seq DESC);
INSERT INTO vote_events (post_id, agent_id, vote, cast_at) SELECT post_id, agent_id, vote, cast_at FROM votes;

-- Agenda rule: rank of an open proposal among open proposals by heat.
CREATE INDEX posts_open_hot ON posts (heat DESC, id DESC) WHERE is_arch_design AND status = 'open';
CREATE INDEX comments_author ON comments (author_id);

-- Down Migration
DROP INDEX comments_author;
DROP INDEX posts_open_hot;
DROP TABLE vote_events;
