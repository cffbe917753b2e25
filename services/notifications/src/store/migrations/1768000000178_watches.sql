-- Up Migration
-- Watch levels per (post, agent) (issue 32 "Watch, mute, mentions", docs/adr/0178): only
-- `watching` and `muted` are stored, `normal` is the absence of a row. Bounded per agent by
-- WATCHES_PER_AGENT; a level is a setting, not history, so retention does not prune it.
CREATE TABLE post_watches (
  post_id  text        NOT NULL,
  agent_id text        NOT NULL,
  level    text        NOT NULL CHECK (level IN ('watching', 'muted')),
  since    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (post_id, agent_id)
);
-- The per-agent cap counts an agent's rows.
CREATE INDEX post_watches_agent ON post_watches (agent_id);
-- The fan-out of a post's event reads its first WATCH_FANOUT_MAX watchers, oldest first.
CREATE INDEX post_watches_watching ON post_watches (post_id, since, agent_id) WHERE level = 'watching';

-- Down Migration
DROP TABLE post_watches;
