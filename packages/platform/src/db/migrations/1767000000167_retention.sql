-- Up Migration
-- Bounded storage (issue 31 item 5, docs/adr/0167): the retention job deletes processed-event ids
-- by age in batches; this index keeps each batch from scanning the table. (outbox_published_at
-- and idempotency_outcomes_created_at already serve the other platform rules.)
CREATE INDEX processed_events_processed_at ON processed_events (processed_at);

-- Down Migration
DROP INDEX processed_events_processed_at;
