import { createLogger, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres } from "@aps/testkit";

/**
 * Replicas that start at the same moment open the same schema concurrently: without the advisory
 * lock around `CREATE SCHEMA IF NOT EXISTS`, PostgreSQL lets one of them fail with a unique
 * violation on pg_namespace. Real PostgreSQL (the embedded server of the all-in-one is the same engine, docs/adr/0080).
 */
const real = await hasPostgres();
if (!real) console.warn("database.test.ts: PostgreSQL is not reachable — the concurrent schema creation test is SKIPPED");

(real ? describe : describe.skip)("openDatabase on PostgreSQL", () => {
  it("opens one schema from 8 replicas at once without a catalog race", async () => {
    const tdb = await createTestDatabase();
    const log = createLogger("db-test", "silent");
    const dbs: Database[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const schema = `race_${round}`;
        const opened = await Promise.all(Array.from({ length: 8 }, () => openDatabase({ url: tdb.url, schema, log })));
        dbs.push(...opened);
        const r = await opened[0]!.pool.query<{ n: string }>("SELECT count(*) AS n FROM pg_namespace WHERE nspname = $1", [schema]);
        expect(Number(r.rows[0]!.n)).toBe(1);
      }
    } finally {
      for (const db of dbs) await db.close();
      await tdb.drop();
    }
  }, 60_000);
});
