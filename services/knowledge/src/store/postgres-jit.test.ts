import { createLogger, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, type TestDatabase } from "@aps/testkit";
import pg from "pg";
import { postgresAvailable, testPost } from "./postgres.fixture.js";
import { PostgresEngine, withoutJit } from "./postgres-engine.js";

/**
 * A search runs with PostgreSQL's JIT compilation off (docs/design/search-and-translation.md#jit-off-for-searches), on the real PostgreSQL: the
 * planner's estimates for the search CTEs are far too high, and with JIT on a million-document
 * index paid ~0.9 s of compiling for a query that runs in 5 ms. The database here has `jit = on`
 * (set on it, whatever the server's default); the test reads the setting in force on the search's
 * own connection, right before each of its statements on `documents`; behind PgBouncer in
 * transaction mode the search's transaction turns it off with `SET LOCAL` (nothing left on the session).
 */
const pgUp = await postgresAvailable();
const d = pgUp ? describe : describe.skip;
const log = createLogger("knowledge-jit-test", "warn");

/** `db`'s pool with every client's statements on `documents` preceded by a read of `jit`, recorded in `seen`. */
function observeJit(db: Database, seen: string[]): void {
  const connect = db.pool.connect.bind(db.pool) as () => Promise<pg.PoolClient>;
  (db.pool as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    const c = await connect();
    if (!(c as { observed?: boolean }).observed) {
      const query = c.query.bind(c) as (...args: unknown[]) => Promise<unknown>;
      (c as { observed?: boolean }).observed = true;
      (c as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
        const text = typeof args[0] === "string" ? args[0] : ((args[0] as { text?: string })?.text ?? "");
        if (/\bdocuments\b/.test(text) && !/^\s*(INSERT|UPDATE|DELETE)/i.test(text)) {
          const r = (await query("SELECT current_setting('jit') AS jit")) as { rows: { jit: string }[] };
          seen.push(r.rows[0]!.jit);
        }
        return query(...args);
      };
    }
    return c;
  };
}

d(pgUp ? "search without JIT (real PostgreSQL)" : "search without JIT (SKIPPED: no PostgreSQL)", () => {
  let tdb: TestDatabase;
  const dbs: Database[] = [];
  const open = async () => {
    const db = await openDatabase({ url: tdb.url, schema: "knowledge", log, poolSize: 1 });
    dbs.push(db);
    const engine = new PostgresEngine(db, log);
    await engine.init();
    return { db, engine };
  };
  beforeAll(async () => {
    tdb = await createTestDatabase();
    const admin = new pg.Client({ connectionString: tdb.url });
    await admin.connect();
    const name = (await admin.query<{ db: string }>("SELECT current_database() AS db")).rows[0]!.db;
    await admin.query(`ALTER DATABASE "${name}" SET jit = on`);
    await admin.end();
    const { engine } = await open();
    await engine.upsert(
      Array.from({ length: 20 }, (_, i) =>
        testPost(i, `Replica plan ${i}`, `The cache keeps replica ${i} warm.${i === 7 ? " Sharding by tenant." : ""}`),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(dbs.map((x) => x.close()));
    await tdb?.drop();
  });

  it("directly: every search statement runs with jit off, on a session that started with it on", async () => {
    const { db, engine } = await open();
    const before = await db.pool.query<{ jit: string }>("SELECT current_setting('jit') AS jit");
    expect(before.rows[0]!.jit).toBe("on");
    const seen: string[] = [];
    observeJit(db, seen);
    for (const q of ["replica", "cache keeps", "replca", "cach"]) {
      const r = await engine.search(q, [], 5);
      expect({ q, hits: r.hits.length > 0 }).toEqual({ q, hits: true });
    }
    const similar = await engine.search("sharding tenant", [], 5, { match: "any" });
    expect(similar.hits.length).toBeGreaterThan(0);
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(new Set(seen)).toEqual(new Set(["off"]));
  });

  it("behind PgBouncer in transaction mode: off inside the search's transaction, nothing left on the session", async () => {
    // the search's own transaction (BEGIN READ ONLY … COMMIT, as search() runs it when pooled)
    const pool = new pg.Pool({ connectionString: tdb.url, max: 1 });
    const c = await pool.connect();
    try {
      const jit = async () => (await c.query<{ jit: string }>("SELECT current_setting('jit') AS jit")).rows[0]!.jit;
      await c.query("BEGIN READ ONLY");
      expect(await jit()).toBe("on");
      await withoutJit(c, true);
      expect(await jit()).toBe("off");
      await c.query("COMMIT");
      expect(await jit()).toBe("on");
    } finally {
      c.release();
      await pool.end();
    }
  });
});
