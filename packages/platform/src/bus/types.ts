import type { DeadLetterQueue } from "./redelivery.js";

/**
 * The event bus seam (docs/design/events.md#path-of-an-event): NATS JetStream in the distributed mode, an in-process bus
 * with the same at-least-once + dedupe semantics in the all-in-one default.
 */

/** One domain event as it travels on the bus. */
export interface BusEvent {
  /** Full subject, e.g. `aps.forum.vote_cast`. */
  subject: string;
  /** ULID; published as `Nats-Msg-Id` so the bus drops duplicates within its window. */
  eventId: string;
  /** Protobuf-encoded payload (an event message of the publisher's .proto, docs/design/events.md#catalogue). */
  payload: Uint8Array;
  /** Extra headers: `traceparent`/`tracestate` (W3C trace context), `aps-event-type`. */
  headers: Record<string, string>;
}

/**
 * A handler; throwing (or rejecting) means "not processed": the event is delivered again after a
 * backoff, or parked when the error says it never can be (PoisonEventError; docs/design/events.md#redelivery).
 */
export type EventHandler = (event: BusEvent, meta: { deliveryCount: number }) => Promise<void>;

/** A durable consumer: survives restarts (JetStream) and gets every matching event at least once. */
export interface ConsumerSpec {
  /** Durable consumer name, unique per consuming service and purpose, e.g. `identity-sagacity`. */
  durable: string;
  /** Subject filters relative to nothing (full subjects, NATS wildcards `*` and `>` allowed). */
  subjects: string[];
  handler: EventHandler;
  /**
   * Deliveries of an event failing with an unclassified error before it is parked in the
   * dead-letter queue (default 20). Outage errors are retried without limit and poison events
   * are parked at once, whatever this says (docs/design/events.md#redelivery, redelivery.ts).
   */
  maxDeliver?: number;
  /**
   * Events of a subject (a key: one of `subjects`) handled at once, at most (default 1: one after
   * another, in the stream's order). Only for subjects whose handler does not depend on the order
   * of its events (docs/design/events.md#consumers); each event is still acknowledged only after its handler
   * succeeded. Both buses honour it (JetStream per pull of a subject, the in-process bus per
   * subject filter).
   */
  concurrency?: Readonly<Record<string, number>>;
}

/**
 * Handler of an ephemeral subscription: called once per event seen while subscribed (no
 * redelivery; a throw is logged and dropped). Used for best-effort signals such as cache
 * invalidation, where a missed event is bounded by a TTL (docs/design/edge.md#read-cache-and-etags).
 */
export type EphemeralHandler = (event: BusEvent) => void | Promise<void>;

/** A running consumer. */
export interface Subscription {
  stop(): Promise<void>;
}

/** Publish/consume over one stream of domain events. */
export interface EventBus {
  /** Subject prefix of this deployment (default `aps`); subjects are `<prefix>.<service>.<event>`. */
  readonly prefix: string;
  /**
   * Publishes one event. Resolves once the bus has durably accepted it (JetStream PubAck; for the
   * in-process bus: once every consumer has handled or dead-lettered it). Rejects otherwise —
   * the outbox relay then keeps the row and tries again.
   */
  publish(event: BusEvent): Promise<void>;
  /**
   * True when publishes started one after another, without awaiting the previous one, are stored
   * and delivered in the order they were started, as long as they succeed (JetStream: one
   * connection, the server stores in arrival order; in-process: each consumer's queue is appended
   * in call order). The outbox relay then pipelines its batches (docs/design/events.md#relay); otherwise it
   * awaits each publish before starting the next.
   */
  readonly ordersConcurrentPublishes?: boolean;
  /** Starts a durable consumer. */
  consume(spec: ConsumerSpec): Promise<Subscription>;
  /**
   * Starts an ephemeral, non-durable subscription to `subjects` (full subjects, NATS wildcards):
   * events published from now on, at most once, nothing kept on the server and nothing replayed
   * after a disconnect (JetStream: a core NATS subscription; in-process: a listener). For many
   * replicas that each need every event for a best-effort purpose (a gateway's cache
   * invalidation, docs/design/edge.md#read-cache-and-etags) without creating a durable consumer per replica.
   * `onGap`, when given, is called whenever events may have been missed: when the connection to
   * the bus is lost and again when it is back (JetStream: the client's `disconnect` and
   * `reconnect` status; the in-process bus never misses one). A cache drops what it holds there,
   * so its TTL is no longer the only bound on a missed event (docs/design/edge.md#authentication-cache).
   */
  subscribe(subjects: string[], handler: EphemeralHandler, onGap?: () => void): Promise<Subscription>;
  /** The bus's dead-letter queue of parked events (docs/design/events.md#redelivery). */
  readonly deadLetters?: DeadLetterQueue;
  /** Stops consumers and closes the connection. */
  close(): Promise<void>;
}

/** True when `subject` matches the NATS filter `filter` (`*` = one token, `>` = the rest). */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split(".");
  const s = subject.split(".");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== "*" && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}
