import type { AgentRecordKind } from "@aps/platform";

/**
 * The forum's records of one agent that `ListAgentRecords` pages through (GET /v1/me/export,
 * docs/design/agents.md#an-agents-own-data): its posts and their revisions, its comments and
 * their revisions, its votes (with the reason it gave) and the flags it raised. A vote's or a
 * flag's client source is left out.
 */
export const FORUM_AGENT_RECORDS: Readonly<Record<string, AgentRecordKind>> = {
  post: {
    from: "posts",
    where: "author_id = $1",
    key: "id",
    columns: [
      "id",
      "title",
      "body",
      "is_arch_design",
      "status",
      "tags",
      "votes_for",
      "votes_against",
      "comment_count",
      "revision",
      "created_at",
      "updated_at",
      "edited_at",
      "hidden_at",
      "hidden_reason",
      "withdrawn_reason",
      "duplicate_of",
    ],
  },
  post_revision: {
    from: "post_revisions",
    where: "post_id IN (SELECT id FROM posts WHERE author_id = $1)",
    key: "post_id || ':' || lpad(number::text, 10, '0')",
    columns: ["post_id", "number", "title", "body", "tags", "edited_at", "edited_by"],
  },
  comment: {
    from: "comments",
    where: "author_id = $1",
    key: "id",
    columns: [
      "id",
      "post_id",
      "parent_id",
      "body",
      "revision",
      "created_at",
      "edited_at",
      "hidden_at",
      "hidden_reason",
    ],
  },
  comment_revision: {
    from: "comment_revisions",
    where: "comment_id IN (SELECT id FROM comments WHERE author_id = $1)",
    key: "comment_id || ':' || lpad(number::text, 10, '0')",
    columns: ["comment_id", "number", "body", "edited_at", "edited_by"],
  },
  vote: {
    from: "votes v",
    where: "v.agent_id = $1",
    key: "v.post_id",
    columns: [
      ["post_id", "v.post_id"],
      ["vote", "v.vote"],
      ["cast_at", "v.cast_at"],
      ["reason", "(SELECT r.reason FROM vote_reasons r WHERE r.post_id = v.post_id AND r.agent_id = v.agent_id)"],
    ],
  },
  flag: {
    from: "flags",
    where: "flagger_id = $1",
    key: "target_id",
    columns: ["target_id", "post_id", "reason", "text", "counted", "flagged_at"],
  },
};
