-- Up Migration
-- A post's duplicates, oldest first (docs/design/council.md#duplicates): the post page lists the first
-- 20 as links. Partial: only the few posts marked duplicates are in it.
CREATE INDEX posts_duplicates_of ON posts (duplicate_of, created_at, id) WHERE duplicate_of IS NOT NULL;

-- Down Migration
DROP INDEX posts_duplicates_of;
