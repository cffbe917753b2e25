import { ApsError, eventFeedReads, type Logger } from "@aps/platform";
import type { notifications } from "@aps/proto";

/** What the hub reads: the notifications service's `ListEvents` (a NotificationsClient). */
export interface FeedSource {
  listEvents(req: notifications.ListEventsRequest): Promise<notifications.ListEventsResponse>;
}

/** One feed event as every stream sends it, rendered once for all of them. */
export interface HubEvent {
  /** The feed position (`seq`) of the event. */
  readonly seq: bigint;
  /** Its type, for the streams' `types` filter. */
  readonly type: string;
  /** The whole Server-Sent Events frame (`id:`, `event:`, `data:`, blank line). */
  readonly frame: string;
  /** UTF-8 length of `frame`, bytes. */
  readonly bytes: number;
}

/**
 * A live stream attached to the hub: called after each read that found new events (or moved the
 * head), with the new events (every type, oldest first) and the new head. Must not throw.
 */
export type LiveListener = (events: readonly HubEvent[], head: bigint) => void;

/** Tuning of the shared reader; the defaults are the gateway's. */
export interface FeedHubOptions {
  /** Pause between two reads that found less than a full page, ms (default 500). */
  pollMs?: number;
  /** Events per read (default 100, the feed's page maximum). */
  pageSize?: number;
  /** Recent events kept for streams that join the live fan-out after catching up (default 1,024 events / 4 MiB). */
  ringEvents?: number;
  ringBytes?: number;
  /** Stream writes per second the fan-out aims not to exceed (default 2,000; see `readInterval`). */
  streamWritesPerS?: number;
  log?: Logger;
}

/** Longest pause between reads while the notifications service fails, ms. */
const MAX_BACKOFF_MS = 5_000;
/** Most often a failing read is logged, ms. */
const LOG_EVERY_MS = 30_000;
/** Live streams written to in one turn of the event loop (FeedHub `fanOut`). */
const FAN_OUT_SLICE = 100;

/**
 * The pause between two reads of the shared reader, ms: `pollMs`, or longer when `streams` live
 * streams written once per read would exceed `writesPerS` writes a second — `streams` ÷
 * `writesPerS` seconds (2,000 streams at 2,000 writes/s: 1,000 ms). Each read that finds events
 * writes once to every live stream, and on a busy feed nearly every read does; a write is a
 * system call and, to a client on the same host, its TCP receive too (docs/design/events.md#event-stream-sse).
 */
export function readInterval(streams: number, pollMs: number, writesPerS: number): number {
  return Math.max(pollMs, Math.ceil((streams * 1_000) / writesPerS));
}

/**
 * The gateway's one reader of the public feed (docs/design/events.md#event-stream-sse): while at least one
 * event stream is open it reads the feed's newest events — one `ListEvents` call of every type every
 * `pollMs` (immediately again after a full page; less often when the streams would take more than
 * `streamWritesPerS` writes a second, `readInterval`), whatever the number of streams — renders each
 * event once as an SSE frame, and hands each batch to every live stream, which filters by its types
 * in memory. Idle streams cost no read. It keeps the latest events (a ring) so that a stream that
 * caught up with keyset reads of its own can join without a gap, and it starts at the feed's head
 * (`ListEventsResponse.head`), so a stream without a cursor starts at the live end. With no stream
 * left it stops reading and forgets its position (the next stream starts it at the then head).
 */
export class FeedHub {
  private readonly pollMs: number;
  private readonly pageSize: number;
  private readonly ringEvents: number;
  private readonly ringBytes: number;
  private readonly writesPerS: number;
  private readonly log: Logger | undefined;
  /** Every event ≤ head was read (undefined: not started, or stopped). */
  private headSeq: bigint | undefined;
  /** The ring holds every event in (floor, head]. */
  private floor = 0n;
  private ring: HubEvent[] = [];
  private ringSize = 0;
  private readonly listeners = new Set<LiveListener>();
  /** Streams holding the hub (catching up or live): it reads while > 0. */
  private users = 0;
  private running = false;
  /** Callers of `fresh()` waiting for a read that starts after their call. */
  private waiting: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private wake: (() => void) | undefined;
  private lastFailureLog = 0;

  /**
   * @param source the feed (`ListEvents` of the notifications service)
   * @param render the SSE frame of one event (rendered once, shared by every stream)
   */
  constructor(
    private readonly source: FeedSource,
    private readonly render: (e: notifications.FeedEvent) => string,
    opts: FeedHubOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 500;
    this.pageSize = opts.pageSize ?? 100;
    this.ringEvents = opts.ringEvents ?? 1_024;
    this.ringBytes = opts.ringBytes ?? 4 * 1024 * 1024;
    this.writesPerS = opts.streamWritesPerS ?? 2_000;
    this.log = opts.log;
  }

  /** The head the hub has read up to (undefined while stopped). */
  get head(): bigint | undefined {
    return this.headSeq;
  }

  /** A stream starts using the hub (it reads while any does); pair with `release`. */
  acquire(): void {
    this.users++;
    if (!this.running) void this.run();
  }

  /** A stream stopped using the hub; the last one stops it. */
  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users === 0) this.wake?.();
  }

  /**
   * Resolves the head after a read that started after this call (the live end now, not up to
   * `pollMs` ago); rejects with that read's error (notifications unreachable: 503). Needs `acquire`.
   */
  fresh(): Promise<bigint> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.wake?.();
      if (!this.running) void this.run();
    }).then(() => this.headSeq ?? 0n);
  }

  /**
   * Attaches `listener` to the live fan-out when the ring covers `position` (every event after it
   * is in the ring or not read yet); answers the ring's events after `position` (every type) and
   * the head they end at, or undefined when the stream must keep catching up with its own reads.
   * Detach with `detach`.
   */
  join(position: bigint, listener: LiveListener): { replay: HubEvent[]; head: bigint } | undefined {
    if (this.headSeq === undefined || position < this.floor) return undefined;
    this.listeners.add(listener);
    // the ring is in seq order: the first event after `position` by binary search
    let lo = 0;
    let hi = this.ring.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ring[mid]!.seq <= position) lo = mid + 1;
      else hi = mid;
    }
    return { replay: this.ring.slice(lo), head: this.headSeq };
  }

  /** Detaches a live listener (idempotent). */
  detach(listener: LiveListener): void {
    this.listeners.delete(listener);
  }

  /** Number of live listeners (tests, metrics). */
  get liveCount(): number {
    return this.listeners.size;
  }

  /** The read loop: runs while a stream holds the hub or a `fresh()` waits. */
  private async run(): Promise<void> {
    this.running = true;
    let failures = 0;
    try {
      while (this.users > 0 || this.waiting.length > 0) {
        const waiters = this.waiting.splice(0);
        let full = false;
        try {
          full = await this.readOnce();
          failures = 0;
          for (const w of waiters) w.resolve();
        } catch (err) {
          failures++;
          for (const w of waiters) w.reject(err);
          const now = Date.now();
          if (now - this.lastFailureLog >= LOG_EVERY_MS) {
            this.lastFailureLog = now;
            this.log?.warn(
              { err: err instanceof Error ? err.message : String(err) },
              "event streams: feed read failed",
            );
          }
        }
        if (this.users === 0 && this.waiting.length === 0) break;
        if (full && failures === 0) continue;
        const pause =
          failures === 0
            ? readInterval(this.listeners.size, this.pollMs, this.writesPerS)
            : Math.min(MAX_BACKOFF_MS, this.pollMs * 2 ** failures);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pause);
          this.wake = () => (clearTimeout(t), resolve());
        });
        this.wake = undefined;
      }
    } finally {
      this.running = false;
      if (this.users === 0) {
        // forget the position: a later start reads the head again instead of everything since
        this.headSeq = undefined;
        this.ring = [];
        this.ringSize = 0;
      }
    }
  }

  /** One read after the head (the head itself on the first); true when the page was full. */
  private async readOnce(): Promise<boolean> {
    eventFeedReads.inc({ reader: "shared" });
    if (this.headSeq === undefined) {
      const r = await this.source.listEvents({ after: "", types: [], limit: 1 });
      if (!/^\d+$/.test(r.head))
        throw new ApsError("upstream_unavailable", "the notifications service does not report the feed's head");
      this.headSeq = this.floor = BigInt(r.head);
      return false;
    }
    const r = await this.source.listEvents({ after: this.headSeq.toString(), types: [], limit: this.pageSize });
    const events: HubEvent[] = r.items.map((e) => {
      const frame = this.render(e);
      return { seq: BigInt(e.cursor), type: e.type, frame, bytes: Buffer.byteLength(frame) };
    });
    const before = this.headSeq;
    let head = events.at(-1)?.seq ?? before;
    const full = events.length >= this.pageSize;
    // a short page covers everything up to the head read before it
    if (!full && /^\d+$/.test(r.head) && BigInt(r.head) > head) head = BigInt(r.head);
    for (const e of events) {
      this.ring.push(e);
      this.ringSize += e.bytes;
    }
    let drop = 0;
    while (this.ring.length - drop > this.ringEvents || (this.ringSize > this.ringBytes && drop < this.ring.length)) {
      this.ringSize -= this.ring[drop]!.bytes;
      this.floor = this.ring[drop]!.seq;
      drop++;
    }
    if (drop > 0) this.ring = this.ring.slice(drop);
    this.headSeq = head;
    if (events.length > 0 || head !== before) await this.fanOut(events, head);
    return full;
  }

  /**
   * Hands `events` to every live listener, FAN_OUT_SLICE at a time with the event loop's other
   * work (requests, answers) between slices: a write per stream, for 2,000 streams, held the loop
   * for tens of ms at every read (docs/design/events.md#event-stream-sse). A listener that joins
   * meanwhile replays these events from the ring; one that leaves meanwhile is skipped.
   */
  private async fanOut(events: readonly HubEvent[], head: bigint): Promise<void> {
    const listeners = [...this.listeners];
    for (let i = 0; i < listeners.length; i += FAN_OUT_SLICE) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      for (const l of listeners.slice(i, i + FAN_OUT_SLICE)) if (this.listeners.has(l)) l(events, head);
    }
  }
}
