import type { AgentRecordKind } from "@aps/platform";

/**
 * The Council's records of one agent that `ListAgentRecords` pages through (GET /v1/me/export,
 * docs/design/agents.md#an-agents-own-data): the ballots (positions) it cast as a councillor and
 * the concerns it raised.
 */
export const COUNCIL_AGENT_RECORDS: Readonly<Record<string, AgentRecordKind>> = {
  ballot: {
    from: "ballots",
    where: "councillor_id = $1",
    key: "post_id",
    columns: ["post_id", "vote", "reason", "cast_at"],
  },
  concern: {
    from: "concerns",
    where: "raised_by = $1",
    key: "id",
    columns: ["id", "post_id", "reason", "raised_at", "resolved_by", "resolved_at", "resolve_note"],
  },
};
