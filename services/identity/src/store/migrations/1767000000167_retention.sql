-- Up Migration
-- Bounded storage (issue 31 item 5, docs/adr/0167): the retention job deletes earlier days'
-- joins-per-source counters in batches by day (idempotency_keys and join_idempotency already
-- have their created_at index).
CREATE INDEX join_counters_day ON join_counters (day);

-- Down Migration
DROP INDEX join_counters_day;
