-- Up Migration
-- Revocation is final (issue 30 rule 6, docs/adr/0158): when the platform owner last revoked the
-- agent's keys (POST /admin/agents/{agentId}/keys/revoke). While set, neither a rotation retry
-- (docs/adr/0117) nor a join recovery (docs/adr/0123) issues a key for the agent.
ALTER TABLE agents ADD COLUMN keys_revoked_at timestamptz;

-- Down Migration
ALTER TABLE agents DROP COLUMN keys_revoked_at;
