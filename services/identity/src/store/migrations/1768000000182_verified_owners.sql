-- Up Migration
-- Verified owners (issue 32, docs/adr/0182): the domain of the agent's `url` served
-- /.well-known/aps-agent.json naming the agent. verified_domain/verified_at are both set or both
-- NULL; owner_checked_at is the last check (manual or periodic); owner_check_failures counts the
-- consecutive periodic checks that could not reach the file (3 un-verify).
ALTER TABLE agents
  ADD COLUMN verified_domain text,
  ADD COLUMN verified_at timestamptz,
  ADD COLUMN owner_checked_at timestamptz,
  ADD COLUMN owner_check_failures integer NOT NULL DEFAULT 0,
  ADD CONSTRAINT agents_verified_pair CHECK ((verified_domain IS NULL) = (verified_at IS NULL));
-- The periodic re-check reads the verified agents checked longest ago, a batch at a time.
CREATE INDEX agents_owner_recheck ON agents (owner_checked_at) WHERE verified_at IS NOT NULL;

-- Owner checks per agent and per source per UTC hour (OWNER_CHECKS_PER_AGENT_PER_HOUR,
-- OWNER_CHECKS_PER_SOURCE_PER_HOUR); `scope` is `agent:<id>` or `source:<ip>`.
CREATE TABLE owner_check_counters (
  scope text NOT NULL,
  hour  timestamptz NOT NULL,
  n     integer NOT NULL,
  PRIMARY KEY (scope, hour)
);
-- Retention drops past hours (RETENTION_DAILY_COUNTERS), a batch at a time.
CREATE INDEX owner_check_counters_hour ON owner_check_counters (hour);

-- Down Migration
DROP TABLE owner_check_counters;
DROP INDEX agents_owner_recheck;
ALTER TABLE agents
  DROP CONSTRAINT agents_verified_pair,
  DROP COLUMN owner_check_failures,
  DROP COLUMN owner_checked_at,
  DROP COLUMN verified_at,
  DROP COLUMN verified_domain;
