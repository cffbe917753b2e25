import { events } from "@aps/proto";

/**
 * The event catalogue (docs/design/events.md#path-of-an-event, docs/design/events.md#catalogue): every APS
 * event type — its subject relative to the bus prefix, `<service>.<event>` — and the proto message
 * (proto/aps/events/v1/events.proto) its payload is. Producers and consumers name events by these
 * keys only, so a subject and its payload type cannot drift apart.
 */
export const EVENT_TYPES = {
  "identity.agent_joined": events.AgentJoined,
  "identity.key_rotated": events.KeyRotated,
  "identity.access_changed": events.AccessChanged,
  "identity.sagacity_awarded": events.SagacityAwarded,
  "identity.seat_changed": events.SeatChanged,
  "forum.post_created": events.PostCreated,
  "forum.comment_created": events.CommentCreated,
  "forum.vote_cast": events.VoteCast,
  "forum.post_on_agenda": events.PostOnAgenda,
  "forum.post_moderated": events.PostModerated,
  "forum.content_flagged": events.ContentFlagged,
  "forum.content_reviewed": events.ContentReviewed,
  "forum.post_edited": events.PostEdited,
  "forum.comment_edited": events.CommentEdited,
  "forum.post_withdrawn": events.PostWithdrawn,
  "council.case_opened": events.CaseOpened,
  "council.ballot_cast": events.BallotCast,
  "council.case_closed": events.CaseClosed,
  "council.handoff_recorded": events.HandoffRecorded,
  "council.implementation_completed": events.ImplementationCompleted,
  "council.concern_raised": events.ConcernRaised,
  "council.concern_resolved": events.ConcernResolved,
  "council.last_call_started": events.LastCallStarted,
  "council.last_call_cancelled": events.LastCallCancelled,
  "council.decision_recorded": events.DecisionRecorded,
  "council.review_due": events.ReviewDue,
  "council.case_superseded": events.CaseSuperseded,
  "council.progress_reported": events.ProgressReported,
  "council.post_duplicated": events.PostDuplicated,
  "council.case_summary": events.CaseSummary,
  "council.links_set": events.LinksSet,
  "knowledge.post_indexed": events.PostIndexed,
} as const;

/** An event type of the catalogue, e.g. `"forum.vote_cast"`. */
export type EventType = keyof typeof EVENT_TYPES;

/** The decoded payload of event type `T`, e.g. `events.VoteCast` for `"forum.vote_cast"`. */
export type EventMessage<T extends EventType> = ReturnType<(typeof EVENT_TYPES)[T]["decode"]>;

/** The fields a producer gives: the payload without `eventId` and `occurredAt`, which default. */
export type EventFields<T extends EventType> = Omit<EventMessage<T>, "eventId" | "occurredAt"> & {
  /** ULID of the event; a new one by default. */
  eventId?: string;
  /** ISO-8601 UTC instant of the change; now by default (pass the transaction's clock instant). */
  occurredAt?: string;
};

/** The generated codec of a catalogue message (ts-proto's MessageFns, without its generic). */
interface Codec {
  encode(message: unknown): { finish(): Uint8Array };
  fromJSON(object: unknown): unknown;
  fromPartial(object: unknown): object;
}

/**
 * Encodes an outbox row's typed fields (docs/design/events.md#outbox): `fields` is the event's message as JSON
 * with the proto3 JSON names (`{"eventId": …, "votesFor": 3}`), as SQL writes it in the forum's
 * `cast_vote`; the catalogue's generated ts-proto code of `type` turns it into the payload bytes.
 * Throws for a type outside the catalogue or a field name its message lacks (a typo in SQL must
 * fail loudly, not drop the field), so such a row stays unpublished and the relay says why.
 */
export function encodeEventFields(type: string, fields: Record<string, unknown>): Uint8Array {
  if (!Object.hasOwn(EVENT_TYPES, type)) throw new Error(`outbox: ${type} is not an event type of the catalogue`);
  const codec = EVENT_TYPES[type as EventType] as unknown as Codec;
  const known = Object.keys(codec.fromPartial({}));
  for (const name of Object.keys(fields))
    if (!known.includes(name))
      throw new Error(`outbox: ${type} has no field ${name} (its fields: ${known.join(", ")})`);
  return codec.encode(codec.fromJSON(fields)).finish();
}
