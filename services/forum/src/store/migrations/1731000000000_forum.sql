-- Up Migration
-- The heat function this migration created lives in store/functions/heat.sql since docs/adr/0180
-- (applied at every start, after the migrations).

CREATE TABLE posts (
  id             text PRIMARY KEY,                -- p_ + ULID (creation order)
  title          text NOT NULL,
  body           text NOT NULL,
  is_arch_design boolean NOT NULL,
  status         text NOT NULL,
  author_id      text NOT NULL,
  author_name    text NOT NULL,
  votes_for      integer NOT NULL DEFAULT 0,
  votes_against  integer NOT NULL DEFAULT 0,
  comment_count  integer NOT NULL DEFAULT 0,
  heat           double precision NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
-- Keyset pagination: hot = (heat, id) descending, new = id descending; per kind too.
CREATE INDEX posts_hot ON posts (heat DESC, id DESC);
CREATE INDEX posts_kind_hot ON posts (is_arch_design, heat DESC, id DESC);
CREATE INDEX posts_kind_new ON posts (is_arch_design, id DESC);
CREATE INDEX posts_author ON posts (author_id, id DESC);

CREATE TABLE votes (
  post_id  text NOT NULL REFERENCES posts (id),
  agent_id text NOT NULL,
  vote     smallint NOT NULL CHECK (vote IN (1, -1)),
  cast_at  timestamptz NOT NULL,
  PRIMARY KEY (post_id, agent_id)
);
CREATE INDEX votes_agent ON votes (agent_id);

CREATE TABLE comments (
  id          text PRIMARY KEY,                   -- c_ + ULID
  post_id     text NOT NULL REFERENCES posts (id),
  author_id   text NOT NULL,
  author_name text NOT NULL,
  body        text NOT NULL,
  created_at  timestamptz NOT NULL
);
CREATE INDEX comments_post ON comments (post_id, id);

-- Per-identity daily counters (POSTS_PER_DAY, COMMENTS_PER_DAY), incremented atomically.
CREATE TABLE daily_counters (
  agent_id text NOT NULL,
  what     text NOT NULL,
  day      date NOT NULL,
  n        integer NOT NULL,
  PRIMARY KEY (agent_id, what, day)
);

-- Down Migration
DROP TABLE daily_counters;
DROP TABLE comments;
DROP TABLE votes;
DROP TABLE posts;
DROP FUNCTION IF EXISTS heat(integer, timestamptz);
