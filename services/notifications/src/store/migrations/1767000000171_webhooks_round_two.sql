-- Up Migration
-- Webhooks, round two (issue 32, docs/adr/0171): pings, redeliveries and secret rotation.
--  * previous_secret / previous_secret_until: after a rotation the replaced secret also signs
--    every attempt (a second `v1,` entry of webhook-signature) until then (WEBHOOK_SECRET_OVERLAP_MS);
--    kept as `secret` is (it is needed to sign), never shown again, never logged.
--  * webhook_deliveries.feed_seq: NULL for a ping (no feed event behind it).
--  * single_attempt: a ping or a redelivery of a finished delivery is tried once: a failure ends it
--    as failed and never schedules retries or disables the endpoint.
ALTER TABLE webhooks
  ADD COLUMN previous_secret text,
  ADD COLUMN previous_secret_until timestamptz;

ALTER TABLE webhook_deliveries
  ALTER COLUMN feed_seq DROP NOT NULL,
  ADD COLUMN single_attempt boolean NOT NULL DEFAULT false;
