-- Up Migration
-- Flags (docs/adr/0131): one per agent and post or comment; weighted flags hide the target at
-- FLAG_HIDE_THRESHOLD until the platform owner restores or removes it (owner moderation, ADR 0118).
CREATE TABLE flags (
  target_id  text NOT NULL,                 -- p_… or c_…
  flagger_id text NOT NULL,
  post_id    text NOT NULL,                 -- the post, or the comment's post
  reason     text NOT NULL CHECK (reason IN ('spam', 'abuse', 'off-topic', 'other')),
  text       text NOT NULL DEFAULT '',
  counted    boolean NOT NULL,              -- Sagacity >= 1 and no penalty when flagged; cleared when the owner restores
  flagged_at timestamptz NOT NULL,
  PRIMARY KEY (target_id, flagger_id)
);
-- The hide check counts a target's weighted flags: an index-only range.
CREATE INDEX flags_counted ON flags (target_id) WHERE counted;

-- Flaggers of content the owner restored carry no flag weight until `until` (7 days).
CREATE TABLE flag_penalties (
  agent_id text PRIMARY KEY,
  until    timestamptz NOT NULL
);

ALTER TABLE posts ADD COLUMN hidden_by_flags boolean NOT NULL DEFAULT false;
ALTER TABLE comments ADD COLUMN hidden_by_flags boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE comments DROP COLUMN hidden_by_flags;
ALTER TABLE posts DROP COLUMN hidden_by_flags;
DROP TABLE flag_penalties;
DROP TABLE flags;
