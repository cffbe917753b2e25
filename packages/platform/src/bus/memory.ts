import type { BusEvent, ConsumerSpec, EphemeralHandler, EventBus, Subscription } from "./types.js";
import { subjectMatches } from "./types.js";
import type { Logger } from "../log.js";
import { withConsumerSpan } from "./tracing.js";
import { eventsParked, registerDeadLetters, registerLag } from "../metrics.js";
import {
  decideRedelivery,
  errorText,
  type DeadLetterQueue,
  type ParkedEvent,
  type RedeliveryPolicy,
} from "./redelivery.js";

/** Redelivery of the in-process bus: 250 ms doubling to 30 s; unknown failures parked after 20 deliveries. */
export const IN_PROCESS_REDELIVERY: RedeliveryPolicy = { baseDelayMs: 250, maxDelayMs: 30_000, maxDeliver: 20 };

interface Registered {
  spec: ConsumerSpec;
  /** The chain of this consumer's one-at-a-time deliveries, in publish order. */
  queue: Promise<void>;
  /** Subjects handled several at once (ConsumerSpec.concurrency), by subject filter. */
  lanes: Map<string, Lane>;
  /** Deliveries of those lanes being handled or waiting for a place. */
  atOnce: Set<Promise<void>>;
  stopped: boolean;
  /** Deliveries queued for this consumer or being handled (retries included). */
  pending: number;
  /** End the backoff waits in progress. */
  wakes: Set<() => void>;
}

/** An ephemeral subscriber (`subscribe`). */
interface Listener {
  subjects: string[];
  handler: EphemeralHandler;
}

/** Who gets one subject (InProcessBus `route`): listeners, and consumers with the filter that matched. */
interface Route {
  listeners: Listener[];
  consumers: [Registered, string][];
}

/** Most subjects whose routes are kept (InProcessBus `routes`); past it the table starts over. */
const ROUTES_MAX = 1_024;

/** Places of one subject filter handled at once: how many are taken, and who waits, in publish order. */
interface Lane {
  running: number;
  waiting: (() => void)[];
}

/**
 * The in-process event bus of the all-in-one mode. Same contract as JetStream (docs/design/services.md#two-ways-to-run):
 * duplicate `eventId`s within the dedupe window are dropped; every consumer gets each event at
 * least once, in publish order — except the subjects of its `concurrency`, up to that many of which
 * it handles at once, started in publish order, as JetStream does (docs/design/events.md#consumers) — with redelivery on failure — exponential backoff, without limit
 * for outage errors — and poison events parked in an in-memory dead-letter queue (also logged
 * with their payload; docs/design/events.md#redelivery). `publish` resolves only when every consumer has handled or
 * parked the event, and rejects when a consumer is stopped first, so the outbox row stays
 * unpublished (and is retried after a restart) until then.
 * Ephemeral subscribers (`subscribe`) are called synchronously during `publish`, at most once,
 * and are not awaited.
 */
export class InProcessBus implements EventBus {
  /** `publish` appends to each consumer's queue before its first await (docs/design/events.md#relay). */
  readonly ordersConcurrentPublishes = true;
  private readonly consumers = new Map<string, Registered>();
  private readonly listeners = new Set<Listener>();
  /**
   * Who gets each subject published so far — the listeners and consumers whose filters match it,
   * each consumer with its first matching filter (its lane) — so a publish does not match every
   * filter of every consumer again. Emptied whenever a consumer or listener comes or goes; at most
   * ROUTES_MAX subjects (the catalogue's types are far fewer).
   */
  private readonly routes = new Map<string, Route>();
  private readonly seen = new Map<string, number>();
  private readonly parked = new Map<string, { event: BusEvent; info: ParkedEvent }>();
  private parkedSeq = 0;
  private readonly policy: RedeliveryPolicy;
  private readonly unregisterDeadLetters = registerDeadLetters(this);
  private readonly unregisterLag = registerLag(this);

  /**
   * @param dedupeWindowMs how long an eventId is remembered (default 120 000 ms, JetStream's default)
   * @param redelivery backoff and limits of redelivery (default IN_PROCESS_REDELIVERY)
   */
  constructor(
    private readonly log: Logger,
    readonly prefix = "aps",
    private readonly dedupeWindowMs = 120_000,
    redelivery: Partial<RedeliveryPolicy> = {},
  ) {
    this.policy = { ...IN_PROCESS_REDELIVERY, ...redelivery };
  }

  async publish(event: BusEvent): Promise<void> {
    const now = Date.now();
    for (const [id, at] of this.seen) {
      if (now - at <= this.dedupeWindowMs) break;
      this.seen.delete(id);
    }
    if (this.seen.has(event.eventId)) return;
    this.seen.set(event.eventId, now);
    const route = this.route(event.subject);
    for (const l of route.listeners) {
      // Called at once, at most once, never awaited by the publisher: a failure is logged, not retried.
      const failed = (err: unknown) =>
        this.log.warn(
          { err: errMessage(err), subject: event.subject, eventId: event.eventId },
          "ephemeral subscriber failed",
        );
      try {
        void Promise.resolve(l.handler(event)).catch(failed);
      } catch (err) {
        failed(err);
      }
    }
    const deliveries: Promise<void>[] = [];
    for (const [reg, filter] of route.consumers) deliveries.push(this.enqueue(reg, filter, event));
    await Promise.all(deliveries);
  }

  /** The listeners and consumers (with the filter that matched) of `subject`, from `routes`. */
  private route(subject: string): Route {
    let r = this.routes.get(subject);
    if (r) return r;
    r = { listeners: [], consumers: [] };
    for (const l of this.listeners) if (l.subjects.some((f) => subjectMatches(f, subject))) r.listeners.push(l);
    for (const reg of this.consumers.values()) {
      const filter = reg.spec.subjects.find((f) => subjectMatches(f, subject));
      if (filter !== undefined) r.consumers.push([reg, filter]);
    }
    if (this.routes.size >= ROUTES_MAX) this.routes.clear();
    this.routes.set(subject, r);
    return r;
  }

  /**
   * Appends a delivery to the consumer's queue, or to its subject's lane when the consumer handles
   * that subject several at once; the promise rejects when the consumer stopped first.
   */
  private enqueue(reg: Registered, filter: string, event: BusEvent): Promise<void> {
    reg.pending++;
    const parallel = Math.max(1, Math.floor(reg.spec.concurrency?.[filter] ?? 1));
    if (parallel === 1) {
      const delivery = reg.queue.then(() => this.deliver(reg, event)).finally(() => void reg.pending--);
      reg.queue = delivery.catch(() => undefined);
      return delivery;
    }
    let lane = reg.lanes.get(filter);
    if (!lane) reg.lanes.set(filter, (lane = { running: 0, waiting: [] }));
    const place = lane;
    const taken =
      place.running < parallel
        ? (place.running++, Promise.resolve())
        : new Promise<void>((resolve) => place.waiting.push(resolve));
    const delivery = taken
      .then(() => this.deliver(reg, event))
      .finally(() => {
        reg.pending--;
        // the place goes to the next waiting delivery, in publish order
        const next = place.waiting.shift();
        if (next) next();
        else place.running--;
      });
    const settled = delivery.catch(() => undefined);
    reg.atOnce.add(settled);
    void settled.then(() => reg.atOnce.delete(settled));
    return delivery;
  }

  private async deliver(reg: Registered, event: BusEvent): Promise<void> {
    const policy = reg.spec.maxDeliver ? { ...this.policy, maxDeliver: reg.spec.maxDeliver } : this.policy;
    for (let n = 1; !reg.stopped; n++) {
      try {
        await withConsumerSpan(event, reg.spec.durable, n, () => reg.spec.handler(event, { deliveryCount: n }));
        return;
      } catch (err) {
        const decision = decideRedelivery(err, n, policy);
        this.log.warn(
          {
            err: errMessage(err),
            durable: reg.spec.durable,
            subject: event.subject,
            eventId: event.eventId,
            deliveryCount: n,
            kind: decision.kind,
          },
          "event handler failed",
        );
        if (decision.action === "park") {
          this.park(reg.spec.durable, event, err, decision.kind, n);
          return;
        }
        await new Promise<void>((r) => {
          const wake = () => (clearTimeout(t), reg.wakes.delete(wake), r());
          const t = setTimeout(wake, decision.delayMs);
          reg.wakes.add(wake);
        });
      }
    }
    throw new Error(`consumer ${reg.spec.durable} stopped before handling ${event.eventId}`);
  }

  private park(durable: string, event: BusEvent, err: unknown, kind: ParkedEvent["kind"], deliveryCount: number): void {
    const id = String(++this.parkedSeq);
    const info: ParkedEvent = {
      id,
      durable,
      subject: event.subject,
      eventId: event.eventId,
      deliveryCount,
      kind,
      error: errorText(err),
      parkedAt: new Date().toISOString(),
      payloadBytes: event.payload.length,
    };
    this.parked.set(id, { event, info });
    eventsParked.inc({ durable, kind });
    // The queue lives in memory: the log line keeps what is needed to replay it after a restart.
    this.log.error(
      { ...info, payload: Buffer.from(event.payload).toString("base64"), headers: event.headers },
      "event parked in the dead-letter queue",
    );
  }

  /**
   * The in-memory dead-letter queue (docs/design/events.md#redelivery): `replay(id)` delivers the parked event again
   * to the consumer that parked it (if it is still running) and removes it from the queue.
   */
  readonly deadLetters: DeadLetterQueue = {
    list: async (limit = 100) => [...this.parked.values()].slice(0, limit).map((p) => p.info),
    replay: async (id) => {
      const p = this.parked.get(id);
      const reg = p && this.consumers.get(p.info.durable);
      if (!p || !reg) return false;
      this.parked.delete(id);
      // its lane: the first filter that matches (none: its own, handled alone)
      const filter = reg.spec.subjects.find((f) => subjectMatches(f, p.event.subject)) ?? p.event.subject;
      await this.enqueue(reg, filter, p.event).catch(() => undefined);
      return true;
    },
  };

  /**
   * Lag of the running consumers (`aps_consumer_pending`, as JetStreamBus.pending): deliveries
   * queued or being handled, a delivery waiting to be retried after a failure included. 0 for
   * every consumer means nothing published so far can have another effect (tests wait for it
   * before they assert that nothing more happens).
   */
  async pending(): Promise<Record<string, number>> {
    return Object.fromEntries([...this.consumers].map(([durable, reg]) => [durable, reg.pending]));
  }

  /** Parked events by durable (`aps_dead_letter_events`). */
  async deadLetterCounts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const { info } of this.parked.values()) out[info.durable] = (out[info.durable] ?? 0) + 1;
    return out;
  }

  async consume(spec: ConsumerSpec): Promise<Subscription> {
    const reg: Registered = {
      spec,
      queue: Promise.resolve(),
      lanes: new Map(),
      atOnce: new Set(),
      stopped: false,
      pending: 0,
      wakes: new Set(),
    };
    this.consumers.set(spec.durable, reg);
    this.routes.clear();
    return {
      stop: async () => {
        reg.stopped = true;
        for (const wake of [...reg.wakes]) wake();
        this.consumers.delete(spec.durable);
        this.routes.clear();
        await Promise.all([reg.queue, ...reg.atOnce]);
      },
    };
  }

  /**
   * Ephemeral listener: gets events published after this call, at most once (see EventBus.subscribe).
   * `onGap` is never called: an in-process listener misses nothing.
   */
  async subscribe(subjects: string[], handler: EphemeralHandler, _onGap?: () => void): Promise<Subscription> {
    const l = { subjects, handler };
    this.listeners.add(l);
    this.routes.clear();
    return {
      stop: async () => {
        this.listeners.delete(l);
        this.routes.clear();
      },
    };
  }

  async close(): Promise<void> {
    this.unregisterDeadLetters();
    this.unregisterLag();
    this.listeners.clear();
    this.routes.clear();
    await Promise.all(
      [...this.consumers.values()].map((r) => {
        r.stopped = true;
        for (const wake of [...r.wakes]) wake();
        return Promise.all([r.queue, ...r.atOnce]);
      }),
    );
    this.consumers.clear();
  }
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
