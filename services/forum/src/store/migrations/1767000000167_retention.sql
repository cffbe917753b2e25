-- Up Migration
-- Bounded storage (issue 31 item 5, docs/adr/0167): the retention job deletes earlier days'
-- counters, expired flag penalties and superseded vote history in batches by these columns.
CREATE INDEX daily_counters_day ON daily_counters (day);
CREATE INDEX flag_penalties_until ON flag_penalties (until);
CREATE INDEX vote_events_cast_at ON vote_events (cast_at);

-- Down Migration
DROP INDEX vote_events_cast_at;
DROP INDEX flag_penalties_until;
DROP INDEX daily_counters_day;
