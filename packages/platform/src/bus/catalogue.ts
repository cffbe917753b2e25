import { afterCommit, type Tx } from "../db/database.js";
import { inDryRun } from "../db/dry-run.js";
import { newId } from "../ids.js";
import { ApsError } from "../errors.js";
import { enqueueEvent, type OutboxRelay } from "./outbox.js";
import { EVENT_TYPES, type EventFields, type EventMessage, type EventType } from "./event-types.js";

export { EVENT_TYPES, type EventFields, type EventMessage, type EventType } from "./event-types.js";
import type { BusEvent, EventBus, Subscription } from "./types.js";

/** The full subject of `type` on `bus` (`aps.forum.vote_cast`). */
export function subjectOf(bus: Pick<EventBus, "prefix">, type: EventType): string {
  return `${bus.prefix}.${type}`;
}

/**
 * Encodes event `type` with its catalogue message type, filling `eventId` (a new ULID) and
 * `occurredAt` (now, ISO-8601 UTC) when not given. Returns the eventId and the payload bytes.
 */
export function encodeEvent<T extends EventType>(
  type: T,
  fields: EventFields<T>,
): { eventId: string; payload: Uint8Array } {
  const eventId = fields.eventId ?? newId("");
  const message = { ...fields, eventId, occurredAt: fields.occurredAt ?? new Date().toISOString() };
  const codec = EVENT_TYPES[type] as unknown as { encode(m: unknown): { finish(): Uint8Array } };
  return { eventId, payload: codec.encode(message).finish() };
}

/**
 * How long a write waits for its events to reach the bus before it answers that they have not,
 * ms (5 s: under the 10-s gRPC deadline; the relay's retry backoff tops out at 5 s).
 */
export const ANNOUNCE_WAIT_MS = 5_000;

/**
 * The producer side of the catalogue, one per service: `publish` writes the outbox row of a typed
 * event inside the caller's transaction and wakes the outbox relay once that transaction commits
 * (`afterCommit`), so an event leaves if and only if its state change commits (docs/design/events.md#relay,
 * docs/design/events.md#relay).
 */
export class EventOutbox {
  /**
   * @param wake called after a commit that wrote events (the relay's `notify`; a no-op in tests).
   * @param relay the relay that publishes them, for `announced`; without one every event counts
   * as announced (a repository in a test, with nothing to publish to).
   */
  constructor(
    private readonly wake: () => void = () => undefined,
    private readonly relay?: Pick<OutboxRelay, "published">,
  ) {}

  /**
   * Waits until the committed events `eventIds` are on the bus (OutboxRelay `published`), at
   * most `timeoutMs` (ms, default ANNOUNCE_WAIT_MS). Throws ApsError `upstream_unavailable`
   * (Retry-After 5 s) naming `what` when they are not: the change is committed, but not every
   * replica has been told yet (docs/design/identity-and-abuse.md#suspension-and-revocation).
   */
  async announced(eventIds: readonly string[], what: string, timeoutMs = ANNOUNCE_WAIT_MS): Promise<void> {
    // a dry run committed nothing, so there is nothing to announce (docs/design/edge.md#dry-run)
    if (inDryRun()) return;
    if (!this.relay || (await this.relay.published(eventIds, timeoutMs))) return;
    throw new ApsError(
      "upstream_unavailable",
      `${what} is recorded, but the event bus has not yet told every gateway: until it does, other gateways may still accept the agent's key from their cache; send the same request again to confirm`,
      5,
    );
  }

  /**
   * Records event `type` with `fields` in the outbox inside `tx`; resolves its eventId. Encodes
   * with the catalogue's message type, so a field of the wrong type or name fails the type check.
   */
  async publish<T extends EventType>(tx: Tx, type: T, fields: EventFields<T>): Promise<string> {
    const { eventId, payload } = encodeEvent(type, fields);
    await enqueueEvent(tx, { subject: type, eventId, payload });
    afterCommit(tx, this.wake);
    return eventId;
  }

  /** Wakes the relay now: for events written by SQL of the service's own (the forum's `cast_votes`). */
  committed(): void {
    if (inDryRun()) return;
    this.wake();
  }
}

/** Handlers of a consumer, one per event type it consumes; the handled types are its subjects. */
export type EventHandlers = {
  [T in EventType]?: (message: EventMessage<T>, event: BusEvent, meta: { deliveryCount: number }) => Promise<void>;
};

/** A durable consumer of typed events (ConsumerSpec without raw subjects and handler). */
export interface TypedConsumerSpec {
  /** Durable consumer name, unique per consuming service and purpose, e.g. `identity-sagacity`. */
  durable: string;
  handlers: EventHandlers;
  /** As ConsumerSpec.maxDeliver (docs/design/events.md#redelivery). */
  maxDeliver?: number;
  /** As ConsumerSpec.concurrency, by event type (docs/design/events.md#consumers). */
  concurrency?: { [T in EventType]?: number };
}

/**
 * Starts a durable consumer on `bus` for exactly the event types `spec.handlers` names: it
 * subscribes to their subjects, decodes each payload with the catalogue's message type and calls
 * the type's handler. Errors behave as for `EventBus.consume` (a throw means redelivery, docs/design/events.md#redelivery).
 */
export function consumeEvents(bus: EventBus, spec: TypedConsumerSpec): Promise<Subscription> {
  const byType = new Map<string, EventType>();
  for (const type of Object.keys(spec.handlers) as EventType[]) byType.set(subjectOf(bus, type), type);
  return bus.consume({
    durable: spec.durable,
    subjects: [...byType.keys()],
    ...(spec.maxDeliver === undefined ? {} : { maxDeliver: spec.maxDeliver }),
    ...(spec.concurrency === undefined
      ? {}
      : {
          concurrency: Object.fromEntries(
            Object.entries(spec.concurrency).map(([type, n]) => [subjectOf(bus, type as EventType), n]),
          ),
        }),
    handler: async (event, meta) => {
      const type = byType.get(event.subject);
      if (!type) throw new Error(`consumer ${spec.durable} got ${event.subject}, which it does not consume`);
      const handler = spec.handlers[type] as (
        m: unknown,
        e: BusEvent,
        meta: { deliveryCount: number },
      ) => Promise<void>;
      await handler(EVENT_TYPES[type].decode(event.payload), event, meta);
    },
  });
}

/** The catalogue type of a full subject on `bus`, or undefined for a subject outside it. */
export function eventTypeOf(bus: Pick<EventBus, "prefix">, subject: string): EventType | undefined {
  const rel = subject.startsWith(`${bus.prefix}.`) ? subject.slice(bus.prefix.length + 1) : undefined;
  return rel !== undefined && rel in EVENT_TYPES ? (rel as EventType) : undefined;
}
