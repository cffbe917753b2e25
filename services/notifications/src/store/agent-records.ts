import type { AgentRecordKind } from "@aps/platform";

/**
 * The notification service's records of one agent that `ListAgentRecords` pages through
 * (GET /v1/me/export, docs/design/agents.md#an-agents-own-data): its watch levels, its webhooks
 * without their secrets, and its inbox.
 */
export const NOTIFICATIONS_AGENT_RECORDS: Readonly<Record<string, AgentRecordKind>> = {
  watch: {
    from: "post_watches",
    where: "agent_id = $1",
    key: "post_id",
    columns: ["post_id", "level", "since"],
  },
  webhook: {
    from: "webhooks",
    where: "agent_id = $1",
    key: "id",
    columns: ["id", "url", "events", "created_at", "disabled_at", "disabled_reason"],
  },
  inbox: {
    from: "inbox_items",
    where: "agent_id = $1",
    key: "lpad(seq::text, 20, '0')",
    columns: ["seq", "event_id", "type", "post_id", "actor_id", "occurred_at", "data"],
  },
};
