-- Up Migration
-- Tag counts (docs/reference/editing.md "Tags and filters"): how many visible posts carry each tag, for
-- GET /v1/tags. Kept by a trigger on posts, so every write path (create, edit, hide, unhide,
-- retention's delete) keeps it right in the write's own transaction; reading it is one index
-- range, never a scan of posts. Rows of a tag no visible post carries any more stay at 0 and are
-- not listed (a tag is at most 30 characters, and tags are bounded per post and per day).
CREATE TABLE tag_counts (
  tag   text PRIMARY KEY,
  posts integer NOT NULL CHECK (posts >= 0)
);
CREATE INDEX tag_counts_popular ON tag_counts (posts DESC, tag) WHERE posts > 0;

-- The same body as functions/forum_count_post_tags.sql, the live definition applied at every start.
CREATE FUNCTION forum_count_post_tags() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  before_tags text[] := CASE WHEN TG_OP <> 'INSERT' AND OLD.hidden_at IS NULL THEN OLD.tags ELSE '{}' END;
  after_tags  text[] := CASE WHEN TG_OP <> 'DELETE' AND NEW.hidden_at IS NULL THEN NEW.tags ELSE '{}' END;
  removed     text[] := ARRAY(SELECT unnest(before_tags) EXCEPT SELECT unnest(after_tags));
  added       text[] := ARRAY(SELECT unnest(after_tags) EXCEPT SELECT unnest(before_tags));
BEGIN
  -- Only the tags whose count changes. Their rows are locked in tag order first, and new ones
  -- inserted in tag order: writers of the same tags take their locks in one order.
  PERFORM 1 FROM tag_counts WHERE tag = ANY(removed || added) ORDER BY tag FOR UPDATE;
  UPDATE tag_counts SET posts = posts - 1 WHERE tag = ANY(removed);
  INSERT INTO tag_counts (tag, posts) SELECT t, 1 FROM unnest(added) t ORDER BY t
    ON CONFLICT (tag) DO UPDATE SET posts = tag_counts.posts + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER posts_tag_counts AFTER INSERT OR DELETE OR UPDATE OF tags, hidden_at ON posts
  FOR EACH ROW EXECUTE FUNCTION forum_count_post_tags();

INSERT INTO tag_counts (tag, posts)
  SELECT t, count(*) FROM posts, unnest(tags) t WHERE hidden_at IS NULL GROUP BY t;

-- Down Migration
DROP TRIGGER posts_tag_counts ON posts;
DROP FUNCTION forum_count_post_tags();
DROP TABLE tag_counts;
