-- Up Migration
-- Duplicates (docs/adr/0130): the council marks a post a duplicate of another; the forum's
-- projection keeps which one and how many duplicates each original has.
ALTER TABLE posts ADD COLUMN duplicate_of text;
ALTER TABLE posts ADD COLUMN duplicate_count integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE posts DROP COLUMN duplicate_count;
ALTER TABLE posts DROP COLUMN duplicate_of;
