import { createLogger, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * Test fixture (not built into dist): a PostgresEngine on a fresh database of the real PostgreSQL
 * (testkit). `open()` gives another engine on the same database (a restart, a second replica);
 * `drop()` closes every pool and drops the database.
 */
export interface PostgresTestIndex {
  engine: PostgresEngine;
  db: Database;
  open(): Promise<PostgresEngine>;
  drop(): Promise<void>;
}

/** True when the real PostgreSQL is reachable (throws under APS_TEST_REQUIRE_REAL=1 when it is not). */
export const postgresAvailable = hasPostgres;

/** Creates a database and a PostgresEngine on it (not yet `init()`ed). */
export async function postgresTestIndex(): Promise<PostgresTestIndex> {
  const log = createLogger("knowledge-test", "warn");
  const tdb: TestDatabase = await createTestDatabase();
  const dbs: Database[] = [];
  const open = async () => {
    const db = await openDatabase({ url: tdb.url, schema: "knowledge", log, poolSize: 3 });
    dbs.push(db);
    return new PostgresEngine(db, log);
  };
  const engine = await open();
  return {
    engine,
    db: dbs[0]!,
    open,
    drop: async () => {
      await Promise.all(dbs.map((d) => d.close()));
      await tdb.drop();
    },
  };
}
