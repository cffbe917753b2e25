-- Up Migration
-- Webhook attempts are claimed per endpoint, not per delivery (issue 30 rule 7, docs/adr/0159):
-- a worker takes an endpoint whose next delivery is due and that no attempt holds, leases it for
-- one attempt (at most one in flight per endpoint across replicas), and sends that endpoint's
-- oldest due delivery. A slow endpoint's backlog therefore never sits in front of another
-- endpoint's deliveries.
--  * next_due_at: the earliest next_attempt_at of its pending deliveries (NULL: none), set to
--    now() at the latest after each attempt so endpoints with a backlog take turns;
--  * lease_until: an attempt is in flight until then (the attempt deadline + a margin; a worker
--    that dies leaves a lease that expires);
--  * slow: its last attempt failed or took over half the deadline: slow endpoints share at most
--    half of a worker's attempts.
ALTER TABLE webhooks
  ADD COLUMN next_due_at timestamptz,
  ADD COLUMN lease_until timestamptz,
  ADD COLUMN slow boolean NOT NULL DEFAULT false;

UPDATE webhooks w SET next_due_at = d.due
FROM (SELECT webhook_id, min(next_attempt_at) AS due FROM webhook_deliveries
      WHERE status = 'pending' GROUP BY webhook_id) d
WHERE d.webhook_id = w.id AND w.disabled_at IS NULL;

CREATE INDEX webhooks_due ON webhooks (next_due_at) WHERE disabled_at IS NULL AND next_due_at IS NOT NULL;

-- An endpoint's next due delivery (the claim) and the min that sets next_due_at.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (webhook_id, next_attempt_at, seq)
  WHERE status = 'pending';
-- The cross-endpoint due scan of the batch worker is gone.
DROP INDEX webhook_deliveries_due;
