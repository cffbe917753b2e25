import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { z } from "zod";
import { parseEnv } from "./config.js";
import { createLogger } from "./log.js";
import { openDatabase, type Database } from "./db/database.js";
import { migrate } from "./db/migrate.js";
import { PLATFORM_MIGRATIONS_DIR } from "./db/paths.js";
import { metricsRegistry } from "./metrics.js";
import { commonEnvSchema } from "./runtime.js";
import {
  DEFAULT_RETENTION,
  platformRetentionRules,
  pruneTable,
  RetentionJob,
  retentionEnvSchema,
  retentionOf,
} from "./retention.js";

/**
 * The retention job (docs/design/operations.md#retention) on the real PostgreSQL: rows past retention
 * are deleted in batches, rows inside it stay, a `where` narrows what goes, a `date` column
 * compares UTC days, and two pruners at once (two replicas) finish without errors.
 */
const log = createLogger("retention-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! retention.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

describe("retention env", () => {
  it("has documented defaults", () => {
    expect(DEFAULT_RETENTION).toMatchObject({
      intervalMs: 3_600_000,
      outboxMs: 86_400_000,
      processedEventsMs: 14 * 86_400_000,
      idempotencyMs: 86_400_000,
      dailyCountersMs: 2 * 86_400_000,
      inboxMs: 90 * 86_400_000,
      deliveriesMs: 7 * 86_400_000,
    });
  });

  it("is part of every service's config (commonEnvSchema)", () => {
    const cfg = parseEnv(commonEnvSchema, { RETENTION_VOTE_HISTORY: "30d", RETENTION_INTERVAL_MS: "500" });
    expect(retentionOf(cfg)).toEqual({ ...DEFAULT_RETENTION, voteHistoryMs: 30 * 86_400_000, intervalMs: 500 });
    expect(() => parseEnv(commonEnvSchema, { RETENTION_DELIVERIES: "7 days" })).toThrow(/RETENTION_DELIVERIES/);
  });

  it("reads durations like 5s, 12h, 30d or ms, and refuses others naming the variable", () => {
    const schema = z.object(retentionEnvSchema);
    const s = retentionOf(
      parseEnv(schema, { RETENTION_INBOX: "5s", RETENTION_DELIVERIES: "12h", RETENTION_OUTBOX: "1500" }),
    );
    expect([s.inboxMs, s.deliveriesMs, s.outboxMs]).toEqual([5_000, 43_200_000, 1_500]);
    for (const bad of ["0", "-1", "soon", "5 s", "1.5h"])
      expect(() => parseEnv(schema, { RETENTION_INBOX: bad })).toThrow(/RETENTION_INBOX/);
  });
});

(pgUp ? describe : describe.skip)(
  "pruneTable / RetentionJob on real PostgreSQL (SKIPPED when none is reachable)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let db2: Database;
    const now = new Date("2026-03-10T12:00:00Z");
    const DAY = 86_400_000;

    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "retention_test", poolSize: 4, log });
      db2 = await openDatabase({ url: tdb.url, schema: "retention_test", poolSize: 4, log });
      await migrate(db, PLATFORM_MIGRATIONS_DIR, log);
      await db.pool.query(
        "CREATE TABLE events (id serial PRIMARY KEY, at timestamptz NOT NULL, done boolean NOT NULL); CREATE INDEX events_at ON events (at)",
      );
      await db.pool.query("CREATE TABLE per_day (k text, day date NOT NULL, PRIMARY KEY (k, day))");
    });
    afterAll(async () => {
      await db2?.close();
      await db?.close();
      await tdb?.drop();
    });

    /** `old` rows 10 days old and `fresh` rows 1 hour old (half of each `done`). */
    async function seed(old: number, fresh: number): Promise<void> {
      await db.pool.query("TRUNCATE events");
      await db.pool.query(
        `INSERT INTO events (at, done)
       SELECT $1::timestamptz - make_interval(days => 10) + make_interval(secs => i), i % 2 = 0 FROM generate_series(1, $2) i
       UNION ALL
       SELECT $1::timestamptz - make_interval(hours => 1), i % 2 = 0 FROM generate_series(1, $3) i`,
        [now, old, fresh],
      );
    }
    const count = async (sql: string) => Number((await db.pool.query<{ n: string }>(sql)).rows[0]!.n);

    it("deletes rows older than the retention in batches and keeps newer ones", async () => {
      await seed(2_500, 300);
      const r = await pruneTable(db.pool, { table: "events", column: "at", olderThanMs: 7 * DAY, batchSize: 400 }, now);
      expect(r).toEqual({ deleted: 2_500, busy: false });
      expect(await count("SELECT count(*) AS n FROM events")).toBe(300);
      expect(await count("SELECT count(*) AS n FROM events WHERE at < '2026-03-08'")).toBe(0);
      // nothing more to do
      expect((await pruneTable(db.pool, { table: "events", column: "at", olderThanMs: 7 * DAY }, now)).deleted).toBe(0);
    });

    it("deletes only rows matching `where`", async () => {
      await seed(100, 10);
      const r = await pruneTable(
        db.pool,
        { table: "events", column: "at", olderThanMs: 7 * DAY, where: "t.done" },
        now,
      );
      expect(r.deleted).toBe(50);
      expect(await count("SELECT count(*) AS n FROM events WHERE NOT done")).toBe(55);
      expect(await count("SELECT count(*) AS n FROM events WHERE done")).toBe(5);
    });

    it("compares a date column by UTC day", async () => {
      await db.pool.query("TRUNCATE per_day");
      await db.pool.query(
        "INSERT INTO per_day (k, day) VALUES ('a', '2026-03-10'), ('a', '2026-03-09'), ('a', '2026-03-08'), ('a', '2026-03-07')",
      );
      const r = await pruneTable(
        db.pool,
        { table: "per_day", column: "day", columnType: "date", olderThanMs: 2 * DAY },
        now,
      );
      expect(r.deleted).toBe(1);
      const days = await db.pool.query<{ d: string }>(
        "SELECT to_char(day, 'YYYY-MM-DD') AS d FROM per_day ORDER BY day",
      );
      expect(days.rows.map((x) => x.d)).toEqual(["2026-03-08", "2026-03-09", "2026-03-10"]);
    });

    it("two pruners at once (two replicas) delete every old row exactly once, without errors", async () => {
      await seed(6_000, 200);
      const rule = { table: "events", column: "at", olderThanMs: 7 * DAY, batchSize: 250 };
      const results = await Promise.all([
        pruneTable(db.pool, rule, now),
        pruneTable(db2.pool, rule, now),
        pruneTable(db.pool, rule, now),
        pruneTable(db2.pool, rule, now),
      ]);
      // whoever was turned away by the lock reports busy; a later pass finishes what remains
      let total = results.reduce((a, r) => a + r.deleted, 0);
      while (results.some((r) => r.busy) && (await count("SELECT count(*) AS n FROM events")) > 200) {
        const again = await pruneTable(db.pool, rule, now);
        total += again.deleted;
      }
      expect(total).toBe(6_000);
      expect(await count("SELECT count(*) AS n FROM events")).toBe(200);
    });

    it("the job runs the platform's rules (outbox published rows, processed-event ids, keyed-write outcomes) and counts pruned rows", async () => {
      await db.pool.query(
        `INSERT INTO outbox (event_id, subject, payload, created_at, published_at) VALUES
         ('e-old', 's', '\\x00', $1::timestamptz - interval '3 days', $1::timestamptz - interval '3 days'),
         ('e-new', 's', '\\x00', $1::timestamptz - interval '1 hour', $1::timestamptz - interval '1 hour'),
         ('e-unpublished', 's', '\\x00', $1::timestamptz - interval '3 days', NULL)`,
        [now],
      );
      await db.pool.query(
        `INSERT INTO processed_events (consumer, event_id, processed_at) VALUES
         ('c', 'old', $1::timestamptz - interval '15 days'), ('c', 'new', $1::timestamptz - interval '6 days')`,
        [now],
      );
      await db.pool.query(
        `INSERT INTO idempotency_outcomes (agent_id, key, operation, request_hash, created_at) VALUES
         ('a', 'old', 'op', '\\x00', $1::timestamptz - interval '25 hours'), ('a', 'new', 'op', '\\x00', $1::timestamptz - interval '23 hours')`,
        [now],
      );
      const job = new RetentionJob(db.pool, platformRetentionRules(DEFAULT_RETENTION), log, {
        intervalMs: 3_600_000,
        service: "retention_test",
      });
      const pass = await job.runOnce(now);
      expect(pass.pruned).toEqual({ outbox: 1, processed_events: 1, idempotency_outcomes: 1 });
      const left = await db.pool.query<{ id: string }>(
        `SELECT event_id AS id FROM outbox UNION ALL SELECT event_id FROM processed_events UNION ALL SELECT key FROM idempotency_outcomes ORDER BY 1`,
      );
      expect(left.rows.map((r) => r.id)).toEqual(["e-new", "e-unpublished", "new", "new"]);
      const metrics = await metricsRegistry.getSingleMetricAsString("aps_retention_pruned_rows_total");
      expect(metrics).toMatch(/aps_retention_pruned_rows_total\{service="retention_test",table="outbox"\} 1/);
      await job.stop();
    });
  },
);
