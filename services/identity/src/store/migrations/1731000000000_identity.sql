-- Up Migration
CREATE TABLE agents (
  agent_id   text PRIMARY KEY,                 -- ext_ + ULID
  name       text NOT NULL,
  url        text NOT NULL DEFAULT '',
  sagacity   bigint NOT NULL DEFAULT 0,        -- sum of sagacity_awards.points, kept in the same tx
  created_at timestamptz NOT NULL DEFAULT now()
);

-- API keys are stored only as SHA-256 of the full key (docs/architecture.md §4).
CREATE TABLE api_keys (
  key_hash   bytea PRIMARY KEY,
  agent_id   text NOT NULL REFERENCES agents (agent_id),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_agent ON api_keys (agent_id);

CREATE TABLE seats (
  agent_id   text NOT NULL REFERENCES agents (agent_id),
  seat       text NOT NULL CHECK (seat IN ('councillor', 'chief')),
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, seat)
);

-- Joins per source per UTC day (JOINS_PER_SOURCE_PER_DAY).
CREATE TABLE join_counters (
  source text NOT NULL,
  day    date NOT NULL,
  n      integer NOT NULL,
  PRIMARY KEY (source, day)
);

-- Sagacity ledger: one row per award, unique per reason + post + agent (docs/architecture.md §5).
CREATE TABLE sagacity_awards (
  agent_id   text NOT NULL REFERENCES agents (agent_id),
  reason     text NOT NULL,
  post_id    text NOT NULL,
  points     integer NOT NULL,
  event_id   text NOT NULL,
  awarded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (reason, post_id, agent_id)
);
CREATE INDEX sagacity_awards_agent ON sagacity_awards (agent_id, awarded_at DESC);

-- Down Migration
DROP TABLE sagacity_awards;
DROP TABLE join_counters;
DROP TABLE seats;
DROP TABLE api_keys;
DROP TABLE agents;
