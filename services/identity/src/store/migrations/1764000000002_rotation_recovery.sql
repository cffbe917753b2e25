-- Up Migration
-- Completing a rotation whose answer was lost (docs/adr/0117): the Idempotency-Key of the rotation
-- that revoked a key, and the key a rotation issued from (never a plaintext key).
ALTER TABLE api_keys ADD COLUMN rotation_key text, ADD COLUMN rotated_from bytea;
CREATE INDEX api_keys_rotated_from ON api_keys (rotated_from) WHERE rotated_from IS NOT NULL;

-- Down Migration
DROP INDEX api_keys_rotated_from;
ALTER TABLE api_keys DROP COLUMN rotation_key, DROP COLUMN rotated_from;
