import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { createLogger } from "../log.js";
import { openDatabase, type Database } from "./database.js";
import { MissingMigrationsError, migrate, verifyMigrations } from "./migrate.js";

/**
 * Migrations on the real PostgreSQL (docs/design/services.md#migrations): every pending file applied
 * once and recorded, a start with nothing pending applies nothing (it does not load the runner),
 * a file added later is applied by the next start, replicas starting together apply each file
 * once, and `verify` names what is missing.
 */
const log = createLogger("migrate-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! migrate.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

/** A migration file that creates table `name` (fails when run twice: no IF NOT EXISTS). */
const createTable = (name: string) =>
  `-- Up Migration\nCREATE TABLE ${name} (id int PRIMARY KEY);\n-- Down Migration\nDROP TABLE ${name};\n`;

(pgUp ? describe : describe.skip)("migrate on the real PostgreSQL (SKIPPED when none is reachable)", () => {
  let tdb: TestDatabase;
  const dbs: Database[] = [];
  let dir: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), "aps-migrate-test-"));
  });
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.close()));
    await tdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (schema: string) => {
    const db = await openDatabase({ url: tdb.url, schema, poolSize: 2, log });
    dbs.push(db);
    return db;
  };
  const recorded = async (db: Database) =>
    (await db.pool.query<{ name: string }>(`SELECT name FROM ${db.schema}.pgmigrations ORDER BY name`)).rows.map(
      (r) => r.name,
    );

  /** migrate() with a debug logger: the lines it wrote, parsed. */
  async function migrateLogged(db: Database): Promise<{ msg: string; migration?: string }[]> {
    const lines: string[] = [];
    await migrate(db, dir, createLogger("migrate-test", "debug", { write: (l: string) => void lines.push(l) }));
    return lines.map((l) => JSON.parse(l) as { msg: string; migration?: string });
  }

  it("applies pending files once; a start with nothing pending changes nothing; a later file is applied next", async () => {
    writeFileSync(join(dir, "1700000000000_first.sql"), createTable("first_table"));
    const db = await open("mig_a");
    await expect(verifyMigrations(db, dir)).rejects.toBeInstanceOf(MissingMigrationsError);
    // the runner (node-pg-migrate) ran: its own lines are logged
    expect((await migrateLogged(db)).some((l) => l.migration !== undefined)).toBe(true);
    expect(await recorded(db)).toEqual(["1700000000000_first"]);
    // nothing pending: the runner is not started at all (a second run of the file would also fail
    // on CREATE TABLE)
    const second = await migrateLogged(db);
    expect(second.map((l) => l.msg)).toContain("migrations up to date");
    expect(second.filter((l) => l.migration !== undefined)).toEqual([]);
    expect(await recorded(db)).toEqual(["1700000000000_first"]);
    await verifyMigrations(db, dir);

    writeFileSync(join(dir, "1700000000001_second.sql"), createTable("second_table"));
    await expect(verifyMigrations(db, dir)).rejects.toMatchObject({ missing: ["1700000000001_second"] });
    await migrate(db, dir, log);
    expect(await recorded(db)).toEqual(["1700000000000_first", "1700000000001_second"]);
    await db.pool.query("SELECT * FROM first_table, second_table");
  });

  it("four replicas starting at once apply each file once", async () => {
    const replicas = await Promise.all([1, 2, 3, 4].map(() => open("mig_b")));
    await Promise.all(replicas.map((db) => migrate(db, dir, log)));
    expect(await recorded(replicas[0]!)).toEqual(["1700000000000_first", "1700000000001_second"]);
  });
});
