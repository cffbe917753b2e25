-- Up Migration
-- Edits with history, withdrawal, tags (docs/reference/editing.md, docs/adr/0128, 0129).
ALTER TABLE posts
  ADD COLUMN revision integer NOT NULL DEFAULT 1,
  ADD COLUMN edited_at timestamptz,
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
  ADD COLUMN withdrawn_reason text;

-- Every revision of a post; number 1 is the text as created. The primary key makes two
-- concurrent edits two numbers, never one lost (the post row is locked while numbering).
CREATE TABLE post_revisions (
  post_id   text NOT NULL REFERENCES posts (id),
  number    integer NOT NULL,
  title     text NOT NULL,
  body      text NOT NULL,
  tags      text[] NOT NULL,
  edited_at timestamptz NOT NULL,
  edited_by text NOT NULL,
  PRIMARY KEY (post_id, number)
);
INSERT INTO post_revisions (post_id, number, title, body, tags, edited_at, edited_by)
  SELECT id, 1, title, body, tags, created_at, author_id FROM posts;

-- The forum's entries of a post's timeline: edits and a withdrawal decided in the forum.
CREATE TABLE post_events (
  seq      bigserial PRIMARY KEY,
  post_id  text NOT NULL REFERENCES posts (id),
  event    text NOT NULL CHECK (event IN ('edited', 'withdrawn')),
  status   text NOT NULL,
  at       timestamptz NOT NULL,
  by       text NOT NULL,
  revision integer,
  reason   text
);
CREATE INDEX post_events_post ON post_events (post_id, seq);

-- Filters of GET /v1/posts, each indexed: tags (all must match) with a GIN index; status and
-- author with B-trees in both sort orders (keyset: (heat, id) or id, descending).
CREATE INDEX posts_tags ON posts USING gin (tags);
CREATE INDEX posts_status_hot ON posts (status, heat DESC, id DESC);
CREATE INDEX posts_status_new ON posts (status, id DESC);
CREATE INDEX posts_author_hot ON posts (author_id, heat DESC, id DESC);

-- Replies: a comment may answer another comment of the same post.
ALTER TABLE comments
  ADD COLUMN parent_id text REFERENCES comments (id),
  ADD COLUMN reply_count integer NOT NULL DEFAULT 0,
  ADD COLUMN revision integer NOT NULL DEFAULT 1,
  ADD COLUMN edited_at timestamptz;
CREATE INDEX comments_parent ON comments (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE comment_revisions (
  comment_id text NOT NULL REFERENCES comments (id),
  number     integer NOT NULL,
  body       text NOT NULL,
  edited_at  timestamptz NOT NULL,
  edited_by  text NOT NULL,
  PRIMARY KEY (comment_id, number)
);
INSERT INTO comment_revisions (comment_id, number, body, edited_at, edited_by)
  SELECT id, 1, body, created_at, author_id FROM comments;

-- Down Migration
DROP TABLE comment_revisions;
DROP INDEX comments_parent;
ALTER TABLE comments DROP COLUMN parent_id, DROP COLUMN reply_count, DROP COLUMN revision, DROP COLUMN edited_at;
DROP INDEX posts_author_hot;
DROP INDEX posts_status_new;
DROP INDEX posts_status_hot;
DROP INDEX posts_tags;
DROP TABLE post_events;
DROP TABLE post_revisions;
ALTER TABLE posts DROP COLUMN revision, DROP COLUMN edited_at, DROP COLUMN tags, DROP COLUMN withdrawn_reason;
