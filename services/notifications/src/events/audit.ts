import {
  consumeEvents,
  type EventBus,
  type EventHandlers,
  type EventMessage,
  type EventType,
  type Subscription,
} from "@aps/platform";
import type { AuditInput, AuditStore } from "../store/audit.js";

/** Durable consumer name of the audit log (one per purpose, docs/design/events.md#path-of-an-event). */
export const AUDIT_CONSUMER = "notifications-audit";

/** An entry as a rule derives it from one event: the entry without its source, time and seq. */
export type AuditFields = Omit<AuditInput, "sourceId" | "at">;

/** The owner's actions: private (docs/design/identity-and-abuse.md#audit-log). */
const owner = (f: Omit<AuditFields, "visibility" | "sealed" | "actor"> & { actor?: string }): AuditFields => ({
  actor: "owner",
  ...f,
  visibility: "private",
  sealed: false,
});

/** The Council's case actions: public. */
const council = (
  f: Omit<AuditFields, "visibility" | "sealed" | "reason"> & { reason?: string; sealed?: boolean },
): AuditFields => ({
  reason: "",
  sealed: false,
  ...f,
  visibility: "public",
});

const post = (id: string) => ({ targetType: "post", targetId: id });
const or = (s: string) => s || null;

/**
 * Which events are audited and the entry each one gives (docs/design/identity-and-abuse.md#audit-log):
 * every owner action (seats, keys, suspension, hiding; the dead-letter replay is appended by the
 * gateway, having no event) and every Council case action. `before`/`after` hold only the fields
 * the action changed. Events not listed (votes, comments, summaries) are not audited.
 */
export const AUDIT_RULES: { [T in EventType]?: (m: EventMessage<T>) => AuditFields } = {
  "identity.seat_changed": (m) =>
    owner({
      action: m.granted ? "seat.granted" : "seat.revoked",
      targetType: "agent",
      targetId: m.agentId,
      before: { [m.seat]: !m.granted },
      after: { [m.seat]: m.granted },
      reason: "",
    }),
  "identity.access_changed": (m) =>
    m.change === "keys_revoked"
      ? owner({
          action: "keys.revoked",
          targetType: "agent",
          targetId: m.agentId,
          before: {},
          after: { keysRevoked: true },
          reason: "",
        })
      : owner({
          action: m.change === "suspended" ? "agent.suspended" : "agent.reinstated",
          targetType: "agent",
          targetId: m.agentId,
          before: { suspended: m.previousReason !== "", suspendedReason: or(m.previousReason) },
          after: { suspended: m.change === "suspended", suspendedReason: or(m.reason) },
          reason: m.reason,
        }),
  // the owner's decision on content the flags hid (docs/design/identity-and-abuse.md#review-queue)
  "forum.content_reviewed": (m) =>
    owner({
      action: `review.${m.decision}`,
      targetType: m.commentId ? "comment" : "post",
      targetId: m.commentId || m.postId,
      before: { hidden: true },
      after: { hidden: m.decision !== "restore", decision: m.decision },
      reason: m.reason,
    }),
  "forum.post_moderated": (m) =>
    owner({
      actor: m.by || "owner",
      action: `${m.commentId ? "comment" : "post"}.${m.hidden ? "hidden" : "unhidden"}`,
      targetType: m.commentId ? "comment" : "post",
      targetId: m.commentId || m.postId,
      before: { hidden: m.previousReason !== "", hiddenReason: or(m.previousReason) },
      after: { hidden: m.hidden, hiddenReason: or(m.reason) },
      reason: m.reason,
    }),
  "council.case_opened": (m) =>
    council({
      actor: m.openedBy || "system",
      action: "case.nominated",
      ...post(m.postId),
      before: {},
      after: { status: m.status, seats: m.seats, deadline: m.deadline },
    }),
  "council.ballot_cast": (m) =>
    council({
      actor: m.councillorId,
      action: "ballot.cast",
      ...post(m.postId),
      before: { vote: or(m.previousVote) },
      after: { vote: m.vote },
      reason: m.reason,
      // a sealed case's position (not a recusal) is never shown publicly (docs/design/council.md#sealed-ballots)
      sealed: m.sealing !== "" && m.sealing !== "off" && m.vote !== "recuse",
    }),
  "council.concern_raised": (m) =>
    council({
      actor: m.by,
      action: "concern.raised",
      ...post(m.postId),
      before: {},
      after: { concern: m.concernId, open: true },
      reason: m.reason,
    }),
  "council.concern_resolved": (m) =>
    council({
      actor: m.by,
      action: "concern.resolved",
      ...post(m.postId),
      before: { concern: m.concernId, open: true },
      after: { concern: m.concernId, open: false },
      reason: m.note,
    }),
  "council.last_call_started": (m) =>
    council({
      actor: m.by || "system",
      action: "last_call.started",
      ...post(m.postId),
      before: {},
      after: { lastCall: m.outcome, endsAt: m.endsAt },
    }),
  "council.last_call_cancelled": (m) =>
    council({
      actor: m.by || "system",
      action: "last_call.cancelled",
      ...post(m.postId),
      before: { lastCall: m.outcome },
      after: { lastCall: null },
      reason: m.reason,
    }),
  "council.case_closed": (m) =>
    council({
      actor: m.by || "system",
      action: "case.decided",
      ...post(m.postId),
      before: {},
      after: {
        status: m.outcome,
        approvals: m.approvals,
        rejections: m.rejections,
        abstentions: m.abstentions,
        recusals: m.recusals,
      },
      reason: m.reason,
    }),
  "council.decision_recorded": (m) =>
    council({
      actor: m.by,
      action: "decision.recorded",
      ...post(m.postId),
      before: {},
      after: { statement: m.statement, reviewAt: or(m.reviewAt) },
    }),
  "council.handoff_recorded": (m) =>
    council({
      actor: m.by,
      action: "handoff.recorded",
      ...post(m.postId),
      before: {},
      after: { implementation: m.implementation, executor: m.executor },
    }),
  "council.progress_reported": (m) =>
    council({
      actor: m.by,
      action: "progress.reported",
      ...post(m.postId),
      before: {},
      after: { percent: m.percent },
      reason: m.note,
    }),
  "council.implementation_completed": (m) =>
    council({
      actor: m.by,
      action: "implementation.completed",
      ...post(m.postId),
      before: {},
      after: { status: "implemented" },
    }),
  "council.post_duplicated": (m) =>
    council({
      actor: m.by,
      action: "duplicate.marked",
      ...post(m.postId),
      before: {},
      after: { duplicateOf: m.duplicateOf },
    }),
  "council.case_superseded": (m) =>
    council({
      actor: m.by || "system",
      action: "case.superseded",
      ...post(m.postId),
      before: {},
      after: { supersededBy: m.supersededBy },
    }),
  "council.links_set": (m) =>
    council({
      actor: m.by,
      action: "links.set",
      ...post(m.postId),
      before: { links: m.previous },
      after: { links: m.links },
    }),
};

/**
 * Builds the audit log (docs/design/identity-and-abuse.md#audit-log) with one durable consumer of
 * the events of AUDIT_RULES: each event appends its entry, once (the entry's `source_id` is the
 * event id, so a redelivery appends nothing); a failed append throws and the event is delivered
 * again (docs/design/events.md#redelivery), so no committed action is missing from the log.
 */
export function consumeAudit(bus: EventBus, audit: AuditStore): Promise<Subscription> {
  const handlers: EventHandlers = {};
  for (const type of Object.keys(AUDIT_RULES) as EventType[]) {
    const rule = AUDIT_RULES[type] as (m: EventMessage<EventType>) => AuditFields;
    (handlers as Record<string, unknown>)[type] = async (m: EventMessage<EventType>) => {
      await audit.append({ sourceId: m.eventId, at: m.occurredAt, ...rule(m) });
    };
  }
  return consumeEvents(bus, { durable: AUDIT_CONSUMER, handlers });
}
