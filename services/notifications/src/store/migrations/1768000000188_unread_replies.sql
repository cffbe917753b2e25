-- Up Migration
-- An agent's replies (comments it hears of, @mentions of it) in inbox order, so GET /v1/me/attention
-- reads its unread ones after the read mark through this index alone, bounded by its limit
-- (issue 32 "Attention and check-ins", docs/adr/0188). The types are REPLY_TYPES in store/inbox.ts.
CREATE INDEX inbox_items_replies ON inbox_items (agent_id, seq) WHERE type IN ('comment.created', 'agent.mentioned');

-- Down Migration
DROP INDEX inbox_items_replies;
