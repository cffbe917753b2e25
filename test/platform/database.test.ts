import { createLogger, openDatabase, withTransaction, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, waitUntil } from "@aps/testkit";

/**
 * Replicas that start at the same moment open the same schema concurrently: without the advisory
 * lock around `CREATE SCHEMA IF NOT EXISTS`, PostgreSQL lets one of them fail with a unique
 * violation on pg_namespace. Real PostgreSQL (the embedded server of the all-in-one is the same engine, docs/design/services.md#embedded-postgresql).
 */
const real = await hasPostgres();
if (!real)
  console.warn("database.test.ts: PostgreSQL is not reachable — the concurrent schema creation test is SKIPPED");

(real ? describe : describe.skip)("openDatabase on PostgreSQL" + (real ? "" : " (SKIPPED: no PostgreSQL)"), () => {
  it("opens one schema from 8 replicas at once without a catalog race", async () => {
    const tdb = await createTestDatabase();
    const log = createLogger("db-test", "silent");
    const dbs: Database[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const schema = `race_${round}`;
        const opened = await Promise.all(Array.from({ length: 8 }, () => openDatabase({ url: tdb.url, schema, log })));
        dbs.push(...opened);
        const r = await opened[0]!.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_namespace WHERE nspname = $1",
          [schema],
        );
        expect(Number(r.rows[0]!.n)).toBe(1);
      }
    } finally {
      for (const db of dbs) await db.close();
      await tdb.drop();
    }
  }, 60_000);

  it("close() resolves once the server has seen every connection of the pool go (a server stopped right after cuts none)", async () => {
    const tdb = await createTestDatabase();
    const admin = await openDatabase({ url: tdb.url, schema: "watcher", log: createLogger("db-test", "silent") });
    try {
      for (let round = 0; round < 5; round++) {
        const schema = `closing_${round}`;
        const db = await openDatabase({ url: tdb.url, schema, log: createLogger("db-test", "silent"), poolSize: 5 });
        // five connections at once, then idle in the pool
        await Promise.all(Array.from({ length: 5 }, () => db.pool.query("SELECT pg_sleep(0.05)")));
        expect(db.pool.totalCount).toBe(5);
        await db.close();
        const left = await admin.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
          [`aps-${schema}`],
        );
        expect([round, Number(left.rows[0]!.n)]).toEqual([round, 0]);
      }
    } finally {
      await admin.close();
      await tdb.drop();
    }
  }, 60_000);

  it("withTransaction: a connection killed while the transaction waits between queries fails that transaction, not the process; the pool goes on", async () => {
    const tdb = await createTestDatabase();
    const db = await openDatabase({ url: tdb.url, schema: "lost_conn", log: createLogger("db-test", "silent") });
    const unhandled: unknown[] = [];
    const onUncaught = (err: unknown) => unhandled.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      await db.pool.query("CREATE TABLE t (n int)");
      const attempt = withTransaction(db.pool, async (tx) => {
        await tx.query("INSERT INTO t VALUES (1)");
        const pid = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
        // 'end' comes once pg has seen the connection die (after the 'error' it emits for an idle client)
        const ended = new Promise((r) => tx.once("end", r));
        // another connection kills this one while no query of it is running
        await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
        await ended;
        await tx.query("INSERT INTO t VALUES (2)");
      });
      await expect(attempt).rejects.toThrow();
      expect(unhandled).toEqual([]);
      // nothing of the failed transaction was kept, and the pool serves the next one
      await withTransaction(db.pool, (tx) => tx.query("INSERT INTO t VALUES (3)"));
      expect((await db.pool.query<{ n: number }>("SELECT n FROM t ORDER BY n")).rows.map((r) => r.n)).toEqual([3]);
    } finally {
      process.off("uncaughtException", onUncaught);
      await db.close();
      await tdb.drop();
    }
  }, 60_000);

  it("maxLifetimeSeconds: a connection in constant use is replaced once it expires, between two queries, none failing", async () => {
    // Behind PgBouncer, a stopping pod waits for its clients to leave (1.23's SIGTERM): a pool that
    // never lets a busy connection go would keep it until the grace period cut it under a query.
    const tdb = await createTestDatabase();
    const db = await openDatabase({
      url: tdb.url,
      schema: "lifetime",
      log: createLogger("db-test", "silent"),
      poolSize: 1,
      maxLifetimeSeconds: 1,
    });
    try {
      const pid = async () => (await db.pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const first = await pid();
      // queried back to back (never idle for pg's 10 s idle timeout): only the lifetime replaces it
      const next = await waitUntil(
        "another backend after the lifetime",
        async () => {
          const p = await pid();
          return p !== first ? p : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 20 },
      );
      expect(next).not.toBe(first);
    } finally {
      await db.close();
      await tdb.drop();
    }
  }, 60_000);
});
