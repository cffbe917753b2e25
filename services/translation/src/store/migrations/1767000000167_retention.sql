-- Up Migration
-- Bounded storage (issue 31 item 5, docs/adr/0167): the retention job deletes earlier days'
-- quota rows and expired generation leases in batches by these columns.
CREATE INDEX quota_usage_day ON quota_usage (day);
CREATE INDEX generation_leases_expires_at ON generation_leases (expires_at);

-- Down Migration
DROP INDEX generation_leases_expires_at;
DROP INDEX quota_usage_day;
