-- Tag counts (docs/reference/editing.md "Tags and filters"): the trigger function of posts that keeps
-- tag_counts (migration tag-counts) at the number of visible posts carrying each tag.
-- Applied at every start (docs/adr/0180): this file is the live definition; the migration that
-- created the trigger created it with the same body, so the trigger counted from its first write.
CREATE OR REPLACE FUNCTION forum_count_post_tags() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  before_tags text[] := CASE WHEN TG_OP <> 'INSERT' AND OLD.hidden_at IS NULL THEN OLD.tags ELSE '{}' END;
  after_tags  text[] := CASE WHEN TG_OP <> 'DELETE' AND NEW.hidden_at IS NULL THEN NEW.tags ELSE '{}' END;
BEGIN
  -- Only the tags whose count changes, each statement in tag order (one lock order for every writer).
  UPDATE tag_counts SET posts = posts - 1
    WHERE tag IN (SELECT t FROM unnest(before_tags) t EXCEPT SELECT t FROM unnest(after_tags) t);
  INSERT INTO tag_counts (tag, posts, last_used_at)
    SELECT t, 1, now() FROM (SELECT t FROM unnest(after_tags) t EXCEPT SELECT t FROM unnest(before_tags) t) added
    ORDER BY t
    ON CONFLICT (tag) DO UPDATE SET posts = tag_counts.posts + 1, last_used_at = now();
  RETURN NULL;
END $$;
