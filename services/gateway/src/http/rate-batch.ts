/**
 * Local counting with batched reconciliation against the shared rate-limit store
 * (docs/design/identity-and-abuse.md#counting-across-replicas), so a gateway replica does not write to PostgreSQL for every request.
 */

/** What one count in the shared store answered. */
export interface StoreCount {
  /** Requests counted in the partition's current window, every replica included. */
  consumedPoints: number;
  /** Milliseconds until that window resets. */
  msBeforeNext: number;
  /** False when the per-process fallback answered (store down or slow): not a view of the shared count. */
  shared: boolean;
}

/** Adds `points` to `partition` in the shared store (atomically) and answers the new count; never rejects. */
export type StoreCall = (partition: string, points: number) => Promise<StoreCount>;

/** Tunables of the batching (docs/design/identity-and-abuse.md#counting-across-replicas gives the accuracy they imply). */
export interface BatchOptions {
  /** Most requests of one partition admitted here before they must be sent to the store (N). */
  batch: number;
  /**
   * Headroom (H): while fewer than H requests are left in a window, every request is counted in
   * the store before it is answered, exactly as without batching. Limits ≤ H are always exact.
   */
  headroom: number;
  /** A view of the shared count older than this is not trusted for local admission, ms. */
  maxViewAgeMs: number;
  /** Interval at which pending counts are sent to the store, ms. */
  syncMs: number;
}

/** Defaults: N = 32, H = 128, views ≤ 1 s old, reconciliation every 250 ms. */
export const DEFAULT_BATCH: BatchOptions = { batch: 32, headroom: 128, maxViewAgeMs: 1_000, syncMs: 250 };

/** The result of counting one request. */
export interface CountResult {
  /** Requests counted in the window as this replica knows it (shared count + its own pending). */
  used: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
  /** False: over the limit, answer 429. */
  allowed: boolean;
}

/** What this replica knows of one partition's current window. */
interface Window {
  /** The shared count as the store last answered it (all replicas, this window). */
  shared: number;
  /** Admitted here, not yet sent to the store. */
  pending: number;
  /** Sent to the store, answer not back yet (admitted requests and exact-path requests). */
  inflight: number;
  /** The latest store call carrying a batch, while it runs. */
  sending: Promise<unknown> | undefined;
  /** Refused here without asking the store (the window is known to be spent). */
  refused: number;
  /** End of the window, ms since the epoch (from the store's answer). */
  resetAt: number;
  /** When the store last answered for this partition, ms since the epoch. */
  syncedAt: number;
  /**
   * A local window: opened here by the partition's first request, not yet known to the store
   * (`shared` 0, `resetAt` one window after that request). Its requests are sent only when
   * `batch` of them fill it, or by `flush`; a local window that ends first is dropped uncounted.
   */
  local: boolean;
}

/** How long after its end a window is kept before a sweep removes it, ms. */
const SWEEP_EVERY_MS = 60_000;

/**
 * One policy's request counter on a shared store, counted locally between reconciliations
 * (docs/design/identity-and-abuse.md#counting-across-replicas). A request is answered:
 * - locally refused, with no store call, when this replica already knows the window is spent;
 * - locally admitted (fast path) when its view of the shared count is fresh (≤ maxViewAgeMs) and
 *   at least `headroom` below the limit, and fewer than `batch` requests admitted here are still
 *   unknown to the store — those are sent in one `+n` every `syncMs`, or with the request that
 *   finds the batch full (which waits for the store's answer, as do those arriving meanwhile);
 * - otherwise (no fresh view, or near the limit) counted in the store at once together with what
 *   is pending (exact path), and admitted when the store's total is within the limit.
 * - a partition this replica has no window for yet, under a limit above `headroom`, opens a local
 *   window: its first `batch` requests are admitted with no store call, and only the request that
 *   finds the batch full sends them all (exact path). A partition that sends fewer requests in a
 *   window costs no store write at all (most agents: a request every few minutes).
 * At most `batch` requests admitted by one replica are unknown to the store at any time, so
 * across R replicas a window admits at most the limit plus R × batch requests.
 */
export class BatchedCounter {
  private readonly windows = new Map<string, Window>();
  private readonly dirty = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private lastSweep = Date.now();

  /** Whether a partition's first requests open a local window (limits above the headroom only). */
  private readonly localFirst: boolean;

  /**
   * @param limit requests allowed per window
   * @param store the shared store (with its fallback), called with `+points`
   * @param windowMs the store's window, ms: the length of a local window
   */
  constructor(
    private readonly limit: number,
    private readonly store: StoreCall,
    private readonly opts: BatchOptions = DEFAULT_BATCH,
    private readonly windowMs = 60_000,
  ) {
    this.localFirst = limit > opts.headroom;
    this.timer = setInterval(() => void this.sync(), opts.syncMs);
    this.timer.unref();
  }

  /** Counts one request of `partition` (see the class comment for where it is counted). */
  async consume(partition: string): Promise<CountResult> {
    for (;;) {
      const now = Date.now();
      let w = this.windows.get(partition);
      if (w && now >= w.resetAt && w.inflight === 0) {
        // The window closed: its pending requests belonged to it, not to the next one.
        this.windows.delete(partition);
        this.dirty.delete(partition);
        w = undefined;
      }
      if (w && w.shared + w.pending + w.inflight >= this.limit) {
        w.refused++;
        return {
          used: w.shared + w.pending + w.inflight + w.refused,
          resetMs: Math.max(0, w.resetAt - now),
          allowed: false,
        };
      }
      if (!w && this.localFirst) {
        w = {
          shared: 0,
          pending: 0,
          inflight: 0,
          sending: undefined,
          refused: 0,
          resetAt: now + this.windowMs,
          syncedAt: 0,
          local: true,
        };
        this.windows.set(partition, w);
      }
      if (w?.local) {
        if (w.pending + w.inflight < this.opts.batch) {
          w.pending++;
          return { used: w.pending + w.inflight, resetMs: Math.max(0, w.resetAt - now), allowed: true };
        }
        if (w.sending) {
          await w.sending.catch(() => undefined);
          continue;
        }
      }
      const roomy =
        w !== undefined &&
        !w.local &&
        now - w.syncedAt <= this.opts.maxViewAgeMs &&
        w.shared + w.pending + w.inflight + 1 <= this.limit - this.opts.headroom;
      if (w && roomy && w.pending + w.inflight < this.opts.batch) {
        w.pending++;
        this.dirty.add(partition);
        return { used: w.shared + w.pending + w.inflight, resetMs: Math.max(0, w.resetAt - now), allowed: true };
      }
      if (w && roomy && w.sending) {
        // The batch budget is on its way to the store: decide again once it has answered.
        await w.sending.catch(() => undefined);
        continue;
      }
      const points = 1 + (w?.pending ?? 0);
      if (w) {
        w.pending = 0;
        this.dirty.delete(partition);
      }
      const r = await this.send(partition, w, points);
      return { used: r.consumedPoints, resetMs: r.msBeforeNext, allowed: r.consumedPoints <= this.limit };
    }
  }

  /** One store call of `points` for `partition`, tracked as in flight on its window `w` (if any). */
  private async send(partition: string, w: Window | undefined, points: number): Promise<StoreCount> {
    if (w) w.inflight += points;
    const call = this.store(partition, points);
    if (w && points > 1) w.sending = call;
    try {
      const r = await call;
      this.record(partition, r);
      return r;
    } finally {
      if (w) {
        w.inflight -= points;
        if (w.sending === call) w.sending = undefined;
      }
    }
  }

  /** Requests of `partition` admitted here and not yet in the store (added to a store read by `peek`). */
  pendingOf(partition: string): number {
    const w = this.windows.get(partition);
    return w && Date.now() < w.resetAt ? w.pending : 0;
  }

  /** Sends every pending count to the store now, local windows' too. */
  async flush(): Promise<void> {
    await this.flushing;
    const now = Date.now();
    for (const [partition, w] of this.windows)
      if (w.local && w.pending > 0 && now < w.resetAt) this.dirty.add(partition);
    await this.sync();
  }

  /** Sends the pending counts of windows the store knows (run every `syncMs`); local windows wait for a full batch. */
  private sync(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Stops the timer and sends what is pending. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async flushOnce(): Promise<void> {
    const jobs: Promise<unknown>[] = [];
    for (const partition of this.dirty) {
      const w = this.windows.get(partition);
      if (!w || w.pending === 0) continue;
      const points = w.pending;
      w.pending = 0;
      // A StoreCall does not reject; should one, the requests stay admitted.
      jobs.push(this.send(partition, w, points).catch(() => undefined));
    }
    this.dirty.clear();
    const now = Date.now();
    if (now - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = now;
      for (const [p, w] of this.windows)
        if (now >= w.resetAt && (w.pending === 0 || w.local) && w.inflight === 0) this.windows.delete(p);
    }
    await Promise.all(jobs);
  }

  /** Takes the store's answer as this replica's view of the window (never the fallback's). */
  private record(partition: string, r: StoreCount): void {
    const now = Date.now();
    const w = this.windows.get(partition);
    if (!r.shared) {
      // Counted by the per-process fallback: no view of the shared count; ask the store next time.
      if (w) w.syncedAt = 0;
      return;
    }
    const resetAt = now + r.msBeforeNext;
    if (!w) {
      this.windows.set(partition, {
        shared: r.consumedPoints,
        pending: 0,
        inflight: 0,
        sending: undefined,
        refused: 0,
        resetAt,
        syncedAt: now,
        local: false,
      });
      return;
    }
    if (w.local || resetAt > w.resetAt + 1_000) {
      // The store's first answer for a local window, or the store opened a new window meanwhile.
      w.local = false;
      w.shared = r.consumedPoints;
      w.refused = 0;
      w.resetAt = resetAt;
    } else {
      // Answers may arrive out of order: the count only grows within a window.
      w.shared = Math.max(w.shared, r.consumedPoints);
    }
    w.syncedAt = now;
  }
}
