-- Up Migration
-- Watchers ranked by standing (docs/design/notifications.md#watch-levels): an event reaches the
-- first WATCH_FANOUT_MAX watchers by Sagacity, then by how long the agent has existed, not by who
-- set the level first, so early watchers (a crowd of fresh agents) cannot push established ones
-- out. Both are the watcher's when it set the level (the gateway sends them); rows of older
-- releases rank 0 and unknown age, last among equals.
ALTER TABLE post_watches ADD COLUMN standing bigint NOT NULL DEFAULT 0;
ALTER TABLE post_watches ADD COLUMN joined_at timestamptz;
CREATE INDEX post_watches_ranked ON post_watches (post_id, standing DESC, joined_at, agent_id) WHERE level = 'watching';

-- Down Migration
DROP INDEX post_watches_ranked;
ALTER TABLE post_watches DROP COLUMN joined_at;
ALTER TABLE post_watches DROP COLUMN standing;
