import { createLogger, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import type { KnowledgeDoc, SearchEngine } from "../engine.js";
import { PostgresEngine, type SearchBounds } from "./postgres-engine.js";

/**
 * Test fixture (not built into dist): a PostgresEngine on a fresh database of the real PostgreSQL
 * (testkit). `open()` gives another engine on the same database (a restart, a second replica);
 * `drop()` closes every pool and drops the database.
 */
export interface PostgresTestIndex {
  engine: PostgresEngine;
  db: Database;
  /** Another engine on the same database; `bounds` as PostgresEngine's (default SEARCH_BOUNDS). */
  open(bounds?: SearchBounds): Promise<PostgresEngine>;
  drop(): Promise<void>;
}

/** True when the real PostgreSQL is reachable (throws under APS_TEST_REQUIRE_REAL=1 when it is not). */
export const postgresAvailable = hasPostgres;

/** Creates a database and a PostgresEngine on it (not yet `init()`ed). */
export async function postgresTestIndex(): Promise<PostgresTestIndex> {
  const log = createLogger("knowledge-test", "warn");
  const tdb: TestDatabase = await createTestDatabase();
  const dbs: Database[] = [];
  const open = async (bounds?: SearchBounds) => {
    const db = await openDatabase({ url: tdb.url, schema: "knowledge", log, poolSize: 3 });
    dbs.push(db);
    return new PostgresEngine(db, log, bounds);
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

/**
 * Registers the PostgreSQL leg of a per-engine test (`register(name, make)`), on a database of its
 * own dropped after the file; without a PostgreSQL, a skipped test says why (docs/design/tests.md#loud-skips).
 */
export async function withPostgresEngine(
  register: (name: string, make: () => Promise<SearchEngine>) => void,
  what: string,
): Promise<void> {
  if (!(await hasPostgres())) {
    describe.skip(`${what}: postgres (SKIPPED: no PostgreSQL)`, () => it("needs PostgreSQL", () => undefined));
    return;
  }
  let index: PostgresTestIndex | undefined;
  afterAll(async () => index?.drop());
  register("postgres", async () => {
    index = await postgresTestIndex();
    return index.engine;
  });
}

/** A post document numbered `n` (ids `p_01JWQYPV8RRNPMN5REKHSD000n`), tagged `post`, `arch` and `status`. */
export function testPost(n: number, title: string, body: string, status = "open"): KnowledgeDoc {
  return {
    id: `p_01JWQYPV8RRNPMN5REKHSD${String(n).padStart(4, "0")}`,
    kind: "post",
    title,
    body,
    url: `/v1/posts/p_${n}`,
    tags: ["post", "arch", status],
  };
}
