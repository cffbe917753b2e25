import type { forum, identity } from "@aps/proto";
import { oneOf } from "../route.js";

/** The owner's decisions on content the flags hid, as the API spells them (docs/design/identity-and-abuse.md#review-queue). */
export const REVIEW_DECISIONS = ["restore", "keep_hidden", "suspend_author"] as const;

/** `post` for a `p_…` id, `comment` for a `c_…` one. */
export function reviewKind(id: string): "post" | "comment" {
  return id.startsWith("c_") ? "comment" : "post";
}

/**
 * A target of the review queue as `GET /admin/review` answers it (`ReviewItem`): the forum's
 * item with its author's record from identity (`agent`; undefined when identity does not know
 * the author: joinedAt and sagacity null, not suspended). Flag reasons outside the documented
 * four are a fault (`oneOf`).
 */
export function reviewItem(i: forum.ReviewItem, agent: identity.Agent | undefined) {
  return {
    id: i.targetId,
    kind: reviewKind(i.targetId),
    postId: i.postId,
    title: i.title,
    excerpt: i.excerpt,
    author: {
      agentId: i.authorId,
      name: agent?.name ?? i.authorName,
      joinedAt: agent?.createdAt || null,
      sagacity: agent ? Number(agent.sagacity) : null,
      hiddenByFlags: i.authorFlagHidden,
      suspended: Boolean(agent?.suspendedAt),
      suspendedAt: agent?.suspendedAt || null,
    },
    hiddenAt: i.hiddenAt,
    ageSeconds: Number(i.ageSeconds),
    hiddenReason: i.hiddenReason,
    flags: i.flags.map((f) => ({
      flaggerId: f.flaggerId,
      reason: oneOf(["spam", "abuse", "off-topic", "other"] as const, f.reason, "flag reason"),
      text: f.text,
      source: f.source,
      counted: f.counted,
      flaggedAt: f.flaggedAt,
      decidedAt: f.decidedAt || null,
    })),
  };
}
