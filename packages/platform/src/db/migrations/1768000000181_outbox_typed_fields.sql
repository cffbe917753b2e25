-- Up Migration
-- Typed outbox rows (docs/adr/0181): SQL that writes an event (the forum's cast_vote) stores the
-- event's fields as JSON (proto3 JSON names) under its catalogue type (`subject`), and the relay
-- encodes them with the catalogue's generated code; no payload is encoded in SQL. A row holds
-- exactly one of the two: `payload` (encoded by a TypeScript producer through the catalogue,
-- EventOutbox.publish) or `fields`.
ALTER TABLE outbox ADD COLUMN fields jsonb;
ALTER TABLE outbox ALTER COLUMN payload DROP NOT NULL;
ALTER TABLE outbox ADD CONSTRAINT outbox_payload_or_fields CHECK ((payload IS NULL) <> (fields IS NULL));

-- Down Migration
DELETE FROM outbox WHERE payload IS NULL;
ALTER TABLE outbox DROP CONSTRAINT outbox_payload_or_fields;
ALTER TABLE outbox ALTER COLUMN payload SET NOT NULL;
ALTER TABLE outbox DROP COLUMN fields;
