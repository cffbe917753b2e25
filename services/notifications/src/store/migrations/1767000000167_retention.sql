-- Up Migration
-- Bounded storage (issue 31 item 5, docs/adr/0167): the retention job deletes inbox items and
-- finished webhook deliveries in batches by these columns (feed_events_recorded serves the feed).
CREATE INDEX inbox_items_occurred_at ON inbox_items (occurred_at);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';

-- Inbox items removed by retention count as read: unread (last_seq − read_seq) then counts only
-- items still there, and the numbering (last_seq) never goes back.
CREATE FUNCTION inbox_items_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE inbox_state s SET read_seq = g.top
  FROM (SELECT agent_id, max(seq) AS top FROM gone GROUP BY agent_id) g
  WHERE s.agent_id = g.agent_id AND s.read_seq < g.top;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_items_pruned AFTER DELETE ON inbox_items
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION inbox_items_pruned();

-- Down Migration
DROP TRIGGER inbox_items_pruned ON inbox_items;
DROP FUNCTION inbox_items_pruned();
DROP INDEX webhook_deliveries_finished;
DROP INDEX inbox_items_occurred_at;
