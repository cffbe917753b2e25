import type { BusEvent, ConsumerSpec, EphemeralHandler, EventBus, Subscription } from "./types.js";
import { subjectMatches } from "./types.js";
import type { Logger } from "../log.js";
import { withConsumerSpan } from "./tracing.js";

interface Registered {
  spec: ConsumerSpec;
  queue: Promise<void>;
  stopped: boolean;
}

/**
 * The in-process event bus of the all-in-one mode. Same contract as JetStream (DESIGN.md §3):
 * duplicate `eventId`s within the dedupe window are dropped; every consumer gets each event at
 * least once, in publish order, with redelivery on failure (backoff `retryDelayMs`·n) and a
 * dead-letter log after `maxDeliver` attempts. `publish` resolves only when every consumer has
 * handled the event, so the outbox row stays unpublished (and is retried after a crash) until then.
 * Ephemeral subscribers (`subscribe`) are called synchronously during `publish`, at most once,
 * and are not awaited.
 */
export class InProcessBus implements EventBus {
  /** `publish` appends to each consumer's queue before its first await (docs/adr/0091). */
  readonly ordersConcurrentPublishes = true;
  private readonly consumers = new Map<string, Registered>();
  private readonly listeners = new Set<{ subjects: string[]; handler: EphemeralHandler }>();
  private readonly seen = new Map<string, number>();

  /**
   * @param dedupeWindowMs how long an eventId is remembered (default 120 000 ms, JetStream's default)
   * @param retryDelayMs base delay between redeliveries (ms)
   */
  constructor(
    private readonly log: Logger,
    readonly prefix = "aps",
    private readonly dedupeWindowMs = 120_000,
    private readonly retryDelayMs = 50,
  ) {}

  async publish(event: BusEvent): Promise<void> {
    const now = Date.now();
    for (const [id, at] of this.seen) {
      if (now - at <= this.dedupeWindowMs) break;
      this.seen.delete(id);
    }
    if (this.seen.has(event.eventId)) return;
    this.seen.set(event.eventId, now);
    for (const l of this.listeners) {
      if (!l.subjects.some((f) => subjectMatches(f, event.subject))) continue;
      // Called at once, at most once, never awaited by the publisher: a failure is logged, not retried.
      const failed = (err: unknown) => this.log.warn({ err: errMessage(err), subject: event.subject, eventId: event.eventId }, "ephemeral subscriber failed");
      try {
        void Promise.resolve(l.handler(event)).catch(failed);
      } catch (err) {
        failed(err);
      }
    }
    const deliveries: Promise<void>[] = [];
    for (const reg of this.consumers.values()) {
      if (!reg.spec.subjects.some((f) => subjectMatches(f, event.subject))) continue;
      reg.queue = reg.queue.then(() => this.deliver(reg, event));
      deliveries.push(reg.queue);
    }
    await Promise.all(deliveries);
  }

  private async deliver(reg: Registered, event: BusEvent): Promise<void> {
    const max = reg.spec.maxDeliver ?? 5;
    for (let n = 1; n <= max && !reg.stopped; n++) {
      try {
        await withConsumerSpan(event, reg.spec.durable, n, () => reg.spec.handler(event, { deliveryCount: n }));
        return;
      } catch (err) {
        this.log.warn({ err: errMessage(err), durable: reg.spec.durable, subject: event.subject, eventId: event.eventId, deliveryCount: n }, "event handler failed");
        await new Promise((r) => setTimeout(r, this.retryDelayMs * n));
      }
    }
    if (!reg.stopped) this.log.error({ durable: reg.spec.durable, subject: event.subject, eventId: event.eventId }, "event dead-lettered");
  }

  async consume(spec: ConsumerSpec): Promise<Subscription> {
    const reg: Registered = { spec, queue: Promise.resolve(), stopped: false };
    this.consumers.set(spec.durable, reg);
    return {
      stop: async () => {
        reg.stopped = true;
        this.consumers.delete(spec.durable);
        await reg.queue;
      },
    };
  }

  /** Ephemeral listener: gets events published after this call, at most once (see EventBus.subscribe). */
  async subscribe(subjects: string[], handler: EphemeralHandler): Promise<Subscription> {
    const l = { subjects, handler };
    this.listeners.add(l);
    return {
      stop: async () => {
        this.listeners.delete(l);
      },
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all([...this.consumers.values()].map((r) => ((r.stopped = true), r.queue)));
    this.consumers.clear();
  }
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
