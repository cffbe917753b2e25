import type pg from "pg";
import { GroupCommit } from "@aps/platform";
import type { StoreCount } from "./rate-batch.js";

/** One count to add to the shared store: the row key (`<policy>:<partition>`) and its points. */
interface CountItem {
  key: string;
  points: number;
}

/** Most counts one statement carries (the rest go in the next). */
const MAX_COUNTS_PER_STATEMENT = 500;

/**
 * The shared rate-limit counters in PostgreSQL, written in group commits (docs/design/identity-and-abuse.md#counting-across-replicas): every
 * count that arrives while a statement runs goes into the next one, a single multi-row
 * `INSERT … ON CONFLICT DO UPDATE` on the gateway's `rate_limits` table, instead of one upsert
 * (one round trip, one transaction, one commit) per count. Same rows and the same rule as
 * rate-limiter-flexible's RateLimiterPostgres upsert (docs/design/identity-and-abuse.md), which still reads them
 * (`peek`) and purges expired ones: key `<policy>:<partition>`, `points` counted in the window,
 * `expire` its end (epoch ms); a row whose window ended starts again at the new points with a new
 * end, `windowMs` from now.
 *
 * - Each caller gets exactly what it would have got alone, in arrival order: counts of one key in
 *   one statement are summed, and caller i is answered the row's new total minus the points of the
 *   callers after it.
 * - The rows of a statement are locked in key order, so statements from any number of gateway
 *   replicas cannot deadlock.
 * - A statement is bounded by `timeoutMs` (client-side `query_timeout`); the caller's own wait is
 *   bounded by its own timer too (RequestRateLimiter falls back to its in-process counter).
 */
export class CoalescedRateStore {
  private readonly commits: GroupCommit<CountItem, StoreCount>;
  private readonly text: string;

  /**
   * @param pool the gateway's pool
   * @param table the quoted table, `"schema"."rate_limits"`
   * @param windowMs length of a window, ms (RATE_WINDOW_SECONDS × 1000)
   * @param timeoutMs longest a statement may run, ms
   */
  constructor(
    private readonly pool: pg.Pool,
    table: string,
    private readonly windowMs: number,
    private readonly timeoutMs: number,
  ) {
    this.text = `INSERT INTO ${table} AS r (key, points, expire)
        SELECT k, p, $3::bigint FROM unnest($1::varchar[], $2::int[]) AS t(k, p) ORDER BY k
      ON CONFLICT (key) DO UPDATE SET
        points = CASE WHEN r.expire <= $4 THEN EXCLUDED.points ELSE r.points + EXCLUDED.points END,
        expire = CASE WHEN r.expire <= $4 THEN $3 ELSE r.expire END
      RETURNING key, points, expire`;
    const write = (items: CountItem[]) => this.write(items);
    this.commits = new GroupCommit(write, (item) => write([item]).then((r) => r[0]!), MAX_COUNTS_PER_STATEMENT);
  }

  /**
   * Adds `points` to row `key` (in the next statement) and resolves with the row's count as of this
   * call and the ms left in its window; rejects when the statement fails or exceeds the timeout.
   */
  add(key: string, points: number): Promise<StoreCount> {
    return this.commits.submit({ key, points });
  }

  /** One statement for `items` (any number of them per key): one answer per item, in order. */
  private async write(items: CountItem[]): Promise<StoreCount[]> {
    const sums = new Map<string, number>();
    for (const it of items) sums.set(it.key, (sums.get(it.key) ?? 0) + it.points);
    const keys = [...sums.keys()].sort();
    const now = Date.now();
    const r = await this.pool.query<{ key: string; points: number; expire: string | null }>({
      text: this.text,
      values: [keys, keys.map((k) => sums.get(k)!), now + this.windowMs, now],
      query_timeout: this.timeoutMs,
    } as pg.QueryConfig);
    const rows = new Map(r.rows.map((x) => [x.key, x]));
    // Walk backwards: caller i's count is the total minus what the callers after it added.
    const after = new Map<string, number>();
    const out: StoreCount[] = new Array<StoreCount>(items.length);
    const answeredAt = Date.now();
    for (let i = items.length - 1; i >= 0; i--) {
      const it = items[i]!;
      const row = rows.get(it.key);
      if (!row) throw new Error(`rate-limit store returned no row for ${it.key}`);
      const later = after.get(it.key) ?? 0;
      after.set(it.key, later + it.points);
      out[i] = {
        consumedPoints: Number(row.points) - later,
        msBeforeNext: row.expire === null ? -1 : Math.max(Number(row.expire) - answeredAt, 0),
        shared: true,
      };
    }
    return out;
  }
}
