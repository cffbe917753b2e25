import { EVENT_TYPES } from "@aps/proto";

/**
 * The event catalogue (docs/design/events.md#path-of-an-event, docs/design/events.md#catalogue): every APS
 * event type — its subject relative to the bus prefix, `<service>.<event>` — and the proto message
 * its payload is. An event is a message of its publisher's .proto (`proto/aps/<service>/v1/`) that
 * declares its subject (`option (aps.options.v1.event_subject)`), and `npm run generate -w
 * @aps/proto` writes this table from them, failing on a subject off `<service>.<snake_case name>`. Producers and consumers name events by these keys
 * only, so a subject and its payload type cannot drift apart.
 */
export { EVENT_TYPES };

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
