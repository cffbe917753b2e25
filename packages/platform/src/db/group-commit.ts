import { inDryRun } from "./dry-run.js";

/**
 * Group commit (docs/design/votes-and-heat.md#group-commits-in-the-forum; the forum's votes, the gateway's shared
 * rate-limit counts, docs/design/identity-and-abuse.md#counting-across-replicas): callers `submit` one item each; the
 * items that arrive while a batch is being written are written together as the next batch, by
 * ONE call of `writeBatch` — one statement, one transaction, one WAL flush for all of them. At
 * most one batch is in flight per instance, so batches of one process never wait on each other's
 * row locks.
 *
 * - The first item after an idle period is written after the current event-loop turn
 *   (`setImmediate`), together with whatever arrived in that same turn: no timer, no added wait.
 * - A batch holds at most `maxBatch` items; the rest wait for the next one.
 * - When `writeBatch` throws for a batch of two or more, each of its items is written alone by
 *   `writeOne`, so one failing item (a bad argument, a lock timeout) fails only its own caller.
 *   A single item's error goes to its caller as is.
 */
export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  /**
   * @param writeBatch writes every item of the batch in one transaction; resolves with one result
   *   per item, in the order given; throws (writing nothing) when any item fails.
   * @param writeOne writes one item in its own transaction (the fallback after a failed batch).
   * @param maxBatch largest batch (items), ≥ 1.
   */
  constructor(
    private readonly writeBatch: (items: T[]) => Promise<R[]>,
    private readonly writeOne: (item: T) => Promise<R>,
    private readonly maxBatch: number,
  ) {
    if (!(maxBatch >= 1)) throw new RangeError(`maxBatch must be ≥ 1, got ${maxBatch}`);
  }

  /** Queues `item` for the next batch; resolves with its result once that batch committed. */
  submit(item: T): Promise<R> {
    // a dry run's item is written alone, in the dry run: a batch holds only real writes (docs/design/edge.md#dry-run)
    if (inDryRun()) return this.writeOne(item);
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  /** Items waiting for a batch (for metrics and tests). */
  get waiting(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        await this.write(batch);
      }
    } finally {
      this.running = false;
    }
  }

  private async write(batch: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[]): Promise<void> {
    if (batch.length === 1) {
      const [one] = batch;
      await this.writeOne(one!.item).then(one!.resolve, one!.reject);
      return;
    }
    let results: R[];
    try {
      results = await this.writeBatch(batch.map((b) => b.item));
    } catch {
      // Nothing of the batch was written: each item alone, so only a failing one fails.
      await Promise.all(batch.map((b) => this.writeOne(b.item).then(b.resolve, b.reject)));
      return;
    }
    batch.forEach((b, i) => b.resolve(results[i]!));
  }
}
