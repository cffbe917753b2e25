-- Tag counts (docs/reference/editing.md "Tags and filters"): the trigger function of posts that keeps
-- tag_counts (migration tag-counts) at the number of visible posts carrying each tag.
-- Applied at every start (docs/design/services.md#sql-functions-in-files): this file is the live definition; the migration that
-- created the trigger created it with the same body, so the trigger counted from its first write.
CREATE OR REPLACE FUNCTION forum_count_post_tags() RETURNS trigger LANGUAGE plpgsql AS $$
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
