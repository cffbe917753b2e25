import type pg from "pg";
import { context, ROOT_CONTEXT } from "@opentelemetry/api";
import type { Tx } from "../db/database.js";
import type { EventBus } from "./types.js";
import type { Logger } from "../log.js";
import { newId } from "../ids.js";
import { traceHeaders, withProducerSpan } from "./tracing.js";
import { registerBacklog } from "../metrics.js";

/** An event to record in the outbox; `subject` is relative to the bus prefix (`forum.vote_cast`). */
export interface OutboxEvent {
  subject: string;
  payload: Uint8Array;
  /** Set when the payload already holds its id; a new ULID otherwise. */
  eventId?: string;
  headers?: Record<string, string>;
}

/**
 * Records `event` in the outbox inside the caller's transaction `tx`, so it is published if and
 * only if the state change commits (DESIGN.md §6), with the trace context active now (W3C
 * `traceparent`/`tracestate`) so its consumers join the trace. Returns the eventId.
 */
export async function enqueueEvent(tx: Tx, event: OutboxEvent): Promise<string> {
  const eventId = event.eventId ?? newId("");
  await tx.query("INSERT INTO outbox (event_id, subject, payload, headers) VALUES ($1, $2, $3, $4)", [
    eventId,
    event.subject,
    Buffer.from(event.payload),
    JSON.stringify({ "aps-event-type": event.subject, ...traceHeaders(), ...(event.headers ?? {}) }),
  ]);
  return eventId;
}

/** Tunables of the relay. */
export interface RelayOptions {
  /** Poll interval when idle, ms (default 500). `notify()` wakes it at once. */
  pollMs?: number;
  /** Rows per batch (default 100). */
  batchSize?: number;
  /** Published rows are deleted after this many ms (default 24 h). */
  retainMs?: number;
}

/**
 * Publishes outbox rows in `seq` order and marks them published. At-least-once: a crash between
 * publish and mark re-publishes the row, which the bus drops by `Nats-Msg-Id` and consumers by
 * their processed-event table. Several replicas may run one each; duplicates are harmless. A
 * failed publish (bus down) keeps the row and retries with backoff up to 5 s, so nothing is lost.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private wake = false;
  private lastCleanup = 0;
  private failures = 0;
  private unregisterBacklog: (() => void) | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly opts: RelayOptions = {},
  ) {}

  /** Starts polling. */
  start(): void {
    const service = (this.log.bindings() as { service?: unknown }).service;
    this.unregisterBacklog ??= registerBacklog(this, typeof service === "string" ? service : "unknown");
    this.schedule(0);
  }

  /** Asks for an immediate pass (call after committing a transaction that enqueued events). */
  notify(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wake = true;
      return;
    }
    this.schedule(0);
  }

  /** Number of rows not yet published (backlog metric). */
  async backlog(): Promise<number> {
    const r = await this.pool.query<{ n: string }>("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL");
    return Number(r.rows[0]?.n ?? 0);
  }

  /** Runs passes until the outbox is empty (tests, shutdown). */
  async drain(): Promise<void> {
    while (!this.stopped && (await this.pass()) > 0);
  }

  /** Stops after the pass in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unregisterBacklog?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // Outside any trace: a pass woken by a request must not run (and poll forever) in its trace;
    // each row's publish joins the trace recorded with it instead.
    this.timer = setTimeout(
      context.bind(ROOT_CONTEXT, () => {
        this.timer = undefined;
        this.running = this.loop().finally(() => (this.running = undefined));
      }),
      ms,
    );
  }

  private async loop(): Promise<void> {
    let next = this.opts.pollMs ?? 500;
    try {
      let n: number;
      do {
        this.wake = false;
        n = await this.pass();
      } while (!this.stopped && (n > 0 || this.wake));
      this.failures = 0;
    } catch (err) {
      this.failures++;
      next = Math.min(5_000, 100 * 2 ** this.failures);
      this.log.warn({ err: err instanceof Error ? err.message : String(err), retryInMs: next }, "outbox relay pass failed");
    }
    this.schedule(next);
  }

  /** One batch: returns how many rows it published. */
  private async pass(): Promise<number> {
    const { rows } = await this.pool.query<{ seq: string; event_id: string; subject: string; payload: Buffer; headers: Record<string, string> }>(
      "SELECT seq, event_id, subject, payload, headers FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT $1",
      [this.opts.batchSize ?? 100],
    );
    for (const row of rows) {
      try {
        const event = { subject: `${this.bus.prefix}.${row.subject}`, eventId: row.event_id, payload: new Uint8Array(row.payload), headers: row.headers };
        await withProducerSpan(event, (headers) => this.bus.publish({ ...event, headers }));
      } catch (err) {
        await this.pool.query("UPDATE outbox SET attempts = attempts + 1 WHERE seq = $1", [row.seq]).catch(() => undefined);
        throw err;
      }
      await this.pool.query("UPDATE outbox SET published_at = now() WHERE seq = $1", [row.seq]);
    }
    await this.cleanup();
    return rows.length;
  }

  private async cleanup(): Promise<void> {
    const now = Date.now();
    if (now - this.lastCleanup < 60_000) return;
    this.lastCleanup = now;
    const retain = this.opts.retainMs ?? 86_400_000;
    await this.pool.query("DELETE FROM outbox WHERE published_at < now() - make_interval(secs => $1)", [retain / 1000]);
  }
}
