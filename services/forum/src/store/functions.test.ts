import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  applyFunctions,
  createLogger,
  functionDrift,
  InProcessBus,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  type Database,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./paths.js";
import { startForum } from "../service.js";

/**
 * The forum's SQL functions live once, in store/functions/*.sql, and are re-applied after the
 * migrations at every start (docs/design/services.md#sql-functions-in-files), on the real PostgreSQL: after start-up the live
 * definition of every function is its file's (and a changed live one is told apart); a database
 * left by the release before (its functions and protobuf helpers, then this release's migrations)
 * ends with exactly the functions of a fresh one.
 */
const log = createLogger("forum-functions-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn(`\n!! functions.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the suite is SKIPPED.\n`);

/** Every function of the schema: `name(args)` → its definition (schema name removed). */
async function functionsOf(db: Database): Promise<Record<string, string>> {
  const r = await db.pool.query<{ sig: string; def: string }>(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS sig, pg_get_functiondef(p.oid) AS def
       FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace ORDER BY 1`,
  );
  return Object.fromEntries(r.rows.map((f) => [f.sig, f.def.replace(`FUNCTION ${db.schema}.`, "FUNCTION ")]));
}

(pgUp ? describe : describe.skip)("the forum's SQL functions from store/functions (real PostgreSQL)", () => {
  const opened: { db: Database; tdb: TestDatabase }[] = [];
  const open = async (tdb?: TestDatabase) => {
    tdb ??= await createTestDatabase();
    const db = await openDatabase({ url: tdb.url, schema: "forum", log });
    opened.push({ db, tdb });
    return db;
  };
  afterAll(async () => {
    for (const o of opened) {
      await o.db.close();
      await o.tdb.drop();
    }
  });

  it("after start-up every live function is its file's; a function changed behind its file's back shows, and the next start restores it", async () => {
    // the service's own start, migrating over DATABASE_MIGRATION_URL (docs/design/operations.md#connection-budget-and-pgbouncer)
    const tdb = await createTestDatabase();
    const started = await openDatabase({ url: tdb.url, schema: "forum", log, migrationUrl: tdb.url });
    const forum = await startForum(
      { db: started, bus: new InProcessBus(log), log },
      { listenAddr: "127.0.0.1:0", limits: { postsPerDay: 10, commentsPerDay: 10, agendaMinScore: 3, agendaSize: 10 } },
    );
    await forum.stop(); // closes `started`
    const db = await open(tdb);
    const client = await db.pool.connect();
    try {
      expect(await functionDrift(client, db.schema, FUNCTIONS_DIR)).toEqual([]);
      // a hand edit (or a migration restating a body) makes the live function differ from the file
      await client.query(
        "CREATE OR REPLACE FUNCTION heat(s integer, created timestamptz) RETURNS double precision LANGUAGE sql IMMUTABLE RETURN s",
      );
      await client.query("CREATE FUNCTION stray() RETURNS integer LANGUAGE sql RETURN 1");
      expect(await functionDrift(client, db.schema, FUNCTIONS_DIR)).toEqual([
        "changed: heat(s integer, created timestamp with time zone)",
        "extra: stray()",
      ]);
      await client.query("DROP FUNCTION stray()");
      await applyFunctions(client, db.schema, FUNCTIONS_DIR, log);
      expect(await functionDrift(client, db.schema, FUNCTIONS_DIR)).toEqual([]);
    } finally {
      client.release();
    }
  });

  it("a database of the release before ends with exactly the functions of a fresh one", async () => {
    const fresh = await open();
    await migrate(fresh, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });

    // The release before: the migrations it had (up to 1767000000167), and the functions its
    // migrations created — heat, cast_vote/cast_votes of its signatures (those of
    // previous_signatures.sql) and the protobuf helpers they encoded with — with other bodies:
    // what start-up must replace or drop.
    const before = mkdtempSync(join(tmpdir(), "forum-migrations-before-"));
    try {
      for (const dir of [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR])
        for (const f of readdirSync(dir).filter((f) => f < "1768")) cpSync(join(dir, f), join(before, f));
      const upgraded = await open();
      await migrate(upgraded, before, log);
      await upgraded.pool.query(readFileSync(join(FUNCTIONS_DIR, "previous_signatures.sql"), "utf8"));
      await upgraded.pool.query(`
        CREATE OR REPLACE FUNCTION heat(s integer, created timestamptz) RETURNS double precision
          LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN s;
        CREATE FUNCTION pb_varint(v bigint) RETURNS bytea LANGUAGE sql RETURN '\\x'::bytea;
        CREATE FUNCTION pb_int32_field(field integer, v integer) RETURNS bytea LANGUAGE sql RETURN '\\x'::bytea;
        CREATE FUNCTION pb_string_field(field integer, v text) RETURNS bytea LANGUAGE sql RETURN '\\x'::bytea;`);
      expect(Object.keys(await functionsOf(upgraded))).toContain("pb_varint(v bigint)");

      // this release starts on it
      await migrate(upgraded, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
      const want = await functionsOf(fresh);
      expect(await functionsOf(upgraded)).toEqual(want);
      expect(Object.keys(want).filter((sig) => sig.startsWith("pb_"))).toEqual([]);
    } finally {
      rmSync(before, { recursive: true, force: true });
    }
  });
});
