import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Clock } from "./clock.js";
import { migrate } from "./db/migrate.js";
import { inDryRun } from "./db/dry-run.js";
import { openDatabase, type Database } from "./db/database.js";
import type { Logger } from "./log.js";

/** Folder of the test clock's migration (its one-row table in schema `sandbox`). */
export const TEST_CLOCK_MIGRATIONS_DIR = fileURLToPath(new URL("./db/test-clock-migrations", import.meta.url));

/** The PostgreSQL channel a test clock's advances are announced on (NOTIFY is per database: one sandbox, one channel). */
const CHANNEL = "aps_test_clock";

/** Longest single advance, ms: 400 days, past a year's review date (docs/design/agents.md#sandbox). */
export const MAX_CLOCK_ADVANCE_MS = 400 * 86_400_000;

/**
 * A clock a sandbox moves forward on request (docs/design/agents.md#sandbox): the wall clock plus an offset that
 * only grows. Every service of the instance reads the same object's `now()`; other processes of
 * the instance learn an advance within one PostgreSQL notification.
 */
export interface TestClock extends Clock {
  /** How far this clock is ahead of the wall clock, ms (≥ 0). */
  offsetMs(): number;
  /**
   * Moves the clock forward by `ms` (an integer, 1 … MAX_CLOCK_ADVANCE_MS) for every process of
   * the instance, and resolves with the new now (UTC) and offset (ms) once it is stored. In a dry
   * run (docs/design/edge.md#dry-run) nothing moves and it resolves what an advance would give. Throws
   * RangeError on a bad `ms`, and the database's error when it cannot be stored (nothing moved then).
   */
  advance(ms: number): Promise<{ now: Date; offsetMs: number }>;
}

/** Whether `c` is a sandbox's test clock (it has `advance`). */
export function isTestClock(c: Clock | undefined): c is TestClock {
  return c !== undefined && typeof (c as Partial<TestClock>).advance === "function";
}

/**
 * The test clock kept in PostgreSQL (docs/design/agents.md#sandbox): the offset lives in `sandbox.test_clock`
 * (one row), an advance is one UPDATE that announces the new offset with NOTIFY, and every process
 * holding a `PgTestClock` of that database LISTENs and takes the larger of its offset and the one
 * announced. A lost listening connection is opened again after 1 s and the offset read again, so a
 * notification missed meanwhile is not lost. `now()` never goes back.
 */
export class PgTestClock implements TestClock {
  private offset = 0;
  private listener: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly db: Database,
    private readonly url: string,
    private readonly log: Logger,
  ) {}

  /**
   * Applies the clock's migration in schema `sandbox` of `url`, reads the offset and starts
   * listening. Rejects when the database cannot be reached.
   */
  static async open(url: string, log: Logger): Promise<PgTestClock> {
    const db = await openDatabase({ url, schema: "sandbox", poolSize: 1, idleTimeoutMs: 2_000, log });
    try {
      await migrate(db, [TEST_CLOCK_MIGRATIONS_DIR], log);
      const clock = new PgTestClock(db, url, log);
      await clock.listen();
      return clock;
    } catch (err) {
      await db.close();
      throw err;
    }
  }

  now(): Date {
    return new Date(Date.now() + this.offset);
  }

  offsetMs(): number {
    return this.offset;
  }

  async advance(ms: number): Promise<{ now: Date; offsetMs: number }> {
    if (!Number.isInteger(ms) || ms < 1 || ms > MAX_CLOCK_ADVANCE_MS)
      throw new RangeError(`an advance is a whole number of ms from 1 to ${MAX_CLOCK_ADVANCE_MS}`);
    if (inDryRun()) return { now: new Date(Date.now() + this.offset + ms), offsetMs: this.offset + ms };
    const r = await this.db.pool.query<{ offset_ms: string }>(
      `WITH moved AS (
         UPDATE test_clock SET offset_ms = offset_ms + $1, advanced_at = now() RETURNING offset_ms
       )
       SELECT offset_ms, pg_notify('${CHANNEL}', offset_ms::text) FROM moved`,
      [ms],
    );
    this.raise(Number(r.rows[0]!.offset_ms));
    return { now: this.now(), offsetMs: this.offset };
  }

  /** Stops listening and closes the clock's connections; `now()` keeps the last offset. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
    await this.db.close();
  }

  private raise(offset: number): void {
    if (Number.isFinite(offset) && offset > this.offset) this.offset = offset;
  }

  /** Opens the listening connection, then reads the stored offset (so nothing announced before LISTEN is missed). */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (n) => {
      if (n.channel === CHANNEL) this.raise(Number(n.payload));
    });
    client.on("error", (err) => {
      this.log.warn({ err: String(err) }, "the test clock's listening connection failed; opening it again");
      this.reconnect(client);
    });
    client.on("end", () => this.reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.listener = client;
    const r = await this.db.pool.query<{ offset_ms: string }>("SELECT offset_ms FROM test_clock");
    this.raise(Number(r.rows[0]?.offset_ms ?? 0));
  }

  private reconnect(lost: pg.Client): void {
    if (this.closed || this.listener !== lost) return;
    this.listener = undefined;
    lost.end().catch(() => undefined);
    this.retry = setTimeout(() => {
      this.listen().catch((err: unknown) => {
        this.log.warn({ err: String(err) }, "the test clock cannot listen yet; trying again");
        this.listener = lost; // reconnect() acts only on the current listener
        this.reconnect(lost);
      });
    }, 1_000);
    this.retry.unref();
  }
}
