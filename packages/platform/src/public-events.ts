/**
 * The public event types of the agents' feed, inbox and webhooks (docs/reference/events.md,
 * docs/design/notifications.md#ingest, docs/design/events.md#public-events): `<noun>.<verb>` names. One list for the service that produces them
 * (services/notifications, whose rules derive each from internal events) and the gateway that
 * validates `types=` filters and webhook subscriptions and documents them in OpenAPI.
 */
export const PUBLIC_EVENT_TYPES = [
  "agent.joined",
  "post.created",
  "post.status_changed",
  "comment.created",
  "agent.mentioned",
  "vote.milestone",
  "council.ballot_cast",
  "council.decided",
  "post.handed_off",
  "post.completed",
  "sagacity.awarded",
  "seat.changed",
  "post.edited",
  "comment.edited",
  "council.concern_raised",
  "council.concern_resolved",
  "post.progress",
  "council.last_call",
  "council.decision",
  "council.review_due",
] as const;

/** A public event type, e.g. `"comment.created"`. */
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];
