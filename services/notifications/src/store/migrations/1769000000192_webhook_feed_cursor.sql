-- Up Migration
-- Webhook fan-out without a global lock (issue 31 item 4, docs/adr/0192): the ingest no longer
-- writes a delivery row per (event, webhook) under the feed lock; each webhook keeps a cursor over
-- the feed and the delivery worker materialises its next matching events lazily, outside the lock,
-- at most WEBHOOK_PENDING_MAX pending deliveries per endpoint at a time.
--  * feed_cursor: the feed `seq` up to which the endpoint's events are queued (or skipped as not
--    subscribed); an endpoint whose cursor is below the feed's head has work;
--  * window_full: the last materialisation found the endpoint's window of pending deliveries full;
--    it is not "behind" again until one of its attempts is recorded.
-- Existing webhooks had a delivery row queued by the ingest for every event so far: they start at
-- the head (a delivery row an old replica still queues during a rolling update is kept once, by
-- UNIQUE (webhook_id, feed_seq)).
ALTER TABLE webhooks
  ADD COLUMN feed_cursor bigint NOT NULL DEFAULT 0,
  ADD COLUMN window_full boolean NOT NULL DEFAULT false;

UPDATE webhooks SET feed_cursor = (SELECT coalesce(max(seq), 0) FROM feed_events);

-- The claim's scan of endpoints behind the feed's head, least advanced first.
CREATE INDEX webhooks_feed_behind ON webhooks (slow, feed_cursor) WHERE disabled_at IS NULL AND NOT window_full;

-- Down Migration
DROP INDEX webhooks_feed_behind;
ALTER TABLE webhooks DROP COLUMN window_full, DROP COLUMN feed_cursor;
