import type pg from "pg";
import { context, ROOT_CONTEXT } from "@opentelemetry/api";
import type { Tx } from "../db/database.js";
import { outsideDryRun } from "../db/dry-run.js";
import type { EventBus } from "./types.js";
import type { Logger } from "../log.js";
import { newId } from "../ids.js";
import { traceHeaders, withProducerSpan } from "./tracing.js";
import { registerBacklog } from "../metrics.js";
import { encodeEventFields, EVENT_TYPES, type EventMessage, type EventType } from "./event-types.js";

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
 * only if the state change commits (docs/design/events.md#path-of-an-event), with the trace context active now (W3C
 * `traceparent`/`tracestate`) so its consumers join the trace. Returns the eventId.
 */
export async function enqueueEvent(tx: Tx, event: OutboxEvent): Promise<string> {
  const eventId = event.eventId ?? newId("");
  await tx.query("INSERT INTO outbox (event_id, subject, payload, headers) VALUES ($1, $2, $3, $4)", [
    eventId,
    event.subject,
    Buffer.from(event.payload),
    outboxHeaders(event.subject, event.headers),
  ]);
  return eventId;
}

/**
 * The `outbox.headers` value (JSON text for the jsonb column) of an event with the relative
 * `subject`: `aps-event-type`, the W3C trace context active now (`traceparent`/`tracestate`),
 * then `extra`.
 */
export function outboxHeaders(subject: string, extra: Record<string, string> = {}): string {
  return JSON.stringify(headersOf(subject, extra));
}

/** The outbox headers of an event with the relative `subject` as an object (see `outboxHeaders`). */
function headersOf(subject: string, extra: Record<string, string>): Record<string, string> {
  return { "aps-event-type": subject, ...traceHeaders(), ...extra };
}

/**
 * A header of every typed outbox row (docs/design/events.md#outbox) that a relay of a release before typed rows
 * cannot publish: its value holds a line break, which nats.js refuses in a header, so such a relay
 * fails that row (and retries it) instead of publishing it with an empty payload while a rolling
 * update runs old and new forum replicas side by side. The relay of this release drops it.
 */
export const TYPED_ROW_GUARD = { name: "aps-typed-row", value: "typed\nrow" } as const;

/**
 * One event as SQL of a service's own writes it to the outbox with typed fields (docs/design/events.md#outbox):
 * JSON text for a jsonb argument, `{"type", "fields", "headers"}` — the catalogue type (the row's
 * subject), the fields known before the statement (proto3 JSON names, ts-proto's `toJSON`; the
 * SQL adds the ones it learns under its locks and takes the row's event_id from `fields.eventId`)
 * and the outbox headers (`outboxHeaders`, with TYPED_ROW_GUARD). The relay encodes the fields
 * with the catalogue's generated code (`encodeEventFields`).
 */
export function typedOutboxEvent<T extends EventType>(
  type: T,
  fields: Partial<EventMessage<T>> & { eventId: string },
): string {
  const codec = EVENT_TYPES[type] as unknown as { fromPartial(m: unknown): unknown; toJSON(m: unknown): unknown };
  return JSON.stringify({
    type,
    fields: codec.toJSON(codec.fromPartial(fields)),
    headers: headersOf(type, { [TYPED_ROW_GUARD.name]: TYPED_ROW_GUARD.value }),
  });
}

/** Tunables of the relay. */
export interface RelayOptions {
  /**
   * Safety poll when idle, ms (default 5 000). The relay is woken by `notify()` after every
   * commit of its own process; the poll only finds rows no `notify()` announced: committed by a
   * process that died before publishing them, or written by another process (docs/design/events.md#relay).
   */
  pollMs?: number;
  /** Rows per batch (default 100). */
  batchSize?: number;
}

/** One unpublished outbox row as the relay reads it: `payload` encoded, or typed `fields` (docs/design/events.md#outbox). */
interface OutboxRow {
  seq: string;
  event_id: string;
  subject: string;
  payload: Buffer | null;
  fields: Record<string, unknown> | null;
  headers: Record<string, string>;
}

/** The payload and headers the relay publishes for `row`: a typed row is encoded here, with the catalogue. */
function wireOf(row: OutboxRow): { payload: Uint8Array; headers: Record<string, string> } {
  if (row.payload) return { payload: new Uint8Array(row.payload), headers: row.headers };
  const { [TYPED_ROW_GUARD.name]: _guard, ...headers } = row.headers;
  return { payload: encodeEventFields(row.subject, row.fields ?? {}), headers };
}

/** What publishing a batch achieved: the first `published` events are on the bus; `error` stopped the rest. */
interface BatchOutcome {
  published: number;
  error?: unknown;
}

/**
 * Publishes outbox rows in `seq` order and marks them published; a typed row's fields are encoded
 * here with the catalogue's generated code (docs/design/events.md#outbox), so the bus carries the same bytes
 * either way. At-least-once: a crash between
 * publish and mark re-publishes the row, which the bus drops by `Nats-Msg-Id` and consumers by
 * their processed-event table. Several replicas may run one each; duplicates are harmless. A
 * failed publish (bus down) keeps the row and retries with backoff up to 5 s, so nothing is lost.
 *
 * Batches (docs/design/events.md#relay): one SELECT of up to `batchSize` rows, the publishes pipelined when the
 * bus keeps the order of concurrent publishes (`EventBus.ordersConcurrentPublishes`; awaited one
 * by one otherwise), then one `UPDATE … WHERE seq = ANY($1)` for the leading rows that succeeded.
 * Woken, not polled: `notify()` after each commit; the idle poll is only a slow safety net.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private wake = false;
  private failures = 0;
  private unregisterBacklog: (() => void) | undefined;
  /** Called once at the end of the next pass, whatever its outcome (`published`). */
  private passEnded: (() => void)[] = [];

  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly opts: RelayOptions = {},
  ) {}

  /** Starts the relay: a pass at once, then passes on `notify()` and on the safety poll. */
  start(): void {
    const service = (this.log.bindings() as { service?: unknown }).service;
    this.unregisterBacklog ??= registerBacklog(this, typeof service === "string" ? service : "unknown");
    this.schedule(0);
  }

  /**
   * Asks for an immediate pass (call after committing a transaction that enqueued events). While
   * a pass runs, another follows it; after a failed pass the backoff is kept (a burst of commits
   * during a bus outage must not turn into a burst of doomed publishes).
   */
  notify(): void {
    if (this.stopped) return;
    if (this.running || this.failures > 0) {
      this.wake = true;
      return;
    }
    this.schedule(0);
  }

  /** Number of rows not yet published (backlog metric; index-only on the partial index outbox_unpublished). */
  async backlog(): Promise<number> {
    const r = await this.pool.query<{ n: string }>("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL");
    return Number(r.rows[0]?.n ?? 0);
  }

  /**
   * Resolves true once every event of `eventIds` (outbox event ids this process committed) is on
   * the bus — published by this relay or another replica's — or false after `timeoutMs` (ms)
   * when one is still waiting: the bus is down or slow. Wakes the relay, then checks the outbox
   * after each of its passes, never on a timer (one probe of the unique index on `event_id`). For a write whose answer promises its effect everywhere: a
   * revocation answers only once every gateway has been told (docs/design/identity-and-abuse.md#suspension-and-revocation).
   */
  async published(eventIds: readonly string[], timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ended = new Promise<void>((resolve) => this.passEnded.push(resolve));
      this.notify();
      const { rows } = await this.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL AND event_id = ANY($1::text[])",
        [eventIds],
      );
      if ((rows[0]?.n ?? 0) === 0) return true;
      const left = deadline - Date.now();
      if (left <= 0 || this.stopped) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
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
    // and outside any dry run: a pass publishes only committed rows (docs/design/edge.md#dry-run)
    this.timer = outsideDryRun(() =>
      setTimeout(
        context.bind(ROOT_CONTEXT, () => {
          this.timer = undefined;
          this.running = this.loop().finally(() => (this.running = undefined));
        }),
        ms,
      ),
    );
  }

  private async loop(): Promise<void> {
    let next = this.opts.pollMs ?? 5_000;
    try {
      let n: number;
      // Another pass only when this one was full or a commit woke the relay meanwhile: a pass that
      // found fewer rows than a batch saw every row committed before it, and a row committed after
      // its SELECT comes with its own wake (or, from another replica, with the safety poll) — so
      // no empty SELECT closes each burst (docs/design/events.md#relay).
      const batch = this.opts.batchSize ?? 100;
      do {
        this.wake = false;
        n = await this.pass().finally(() => this.endPass());
      } while (!this.stopped && (n >= batch || this.wake));
      this.failures = 0;
    } catch (err) {
      this.failures++;
      next = Math.min(5_000, 100 * 2 ** this.failures);
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err), retryInMs: next },
        "outbox relay pass failed",
      );
    }
    this.schedule(next);
  }

  /** Tells those waiting in `published` that a pass ended (they check the outbox again). */
  private endPass(): void {
    const waiting = this.passEnded;
    this.passEnded = [];
    for (const resolve of waiting) resolve();
  }

  /** One batch: returns how many rows it read (and published, unless it throws). */
  private async pass(): Promise<number> {
    const { rows } = await this.pool.query<OutboxRow>(
      "SELECT seq, event_id, subject, payload, fields, headers FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT $1",
      [this.opts.batchSize ?? 100],
    );
    if (rows.length > 0) {
      const { published, error } = await this.publish(rows);
      if (published > 0)
        await this.pool.query("UPDATE outbox SET published_at = now() WHERE seq = ANY($1::bigint[])", [
          rows.slice(0, published).map((r) => r.seq),
        ]);
      if (published < rows.length) {
        // The first row that failed; the rows after it are published again on the next pass
        // (the bus drops the ones it already took as duplicates of their eventId).
        await this.pool
          .query("UPDATE outbox SET attempts = attempts + 1 WHERE seq = $1", [rows[published]!.seq])
          .catch(() => undefined);
        throw error;
      }
    }
    // Published rows are deleted by the service's retention job (RETENTION_OUTBOX, docs/design/operations.md#retention).
    return rows.length;
  }

  /**
   * Publishes `rows` in seq order, each under its PRODUCER span: all started at once when the bus
   * keeps their order, else one after another stopping at the first failure. Returns how many
   * leading rows were published and the first error.
   */
  private async publish(rows: OutboxRow[]): Promise<BatchOutcome> {
    const one = async (row: OutboxRow) => {
      const event = { subject: `${this.bus.prefix}.${row.subject}`, eventId: row.event_id, ...wireOf(row) };
      return withProducerSpan(event, (headers) => this.bus.publish({ ...event, headers }));
    };
    if (this.bus.ordersConcurrentPublishes) {
      const settled = await Promise.allSettled(rows.map(one));
      const failed = settled.findIndex((s) => s.status === "rejected");
      return failed < 0
        ? { published: rows.length }
        : { published: failed, error: (settled[failed] as PromiseRejectedResult).reason };
    }
    for (let i = 0; i < rows.length; i++) {
      try {
        await one(rows[i]!);
      } catch (error) {
        return { published: i, error };
      }
    }
    return { published: rows.length };
  }
}
