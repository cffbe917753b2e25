import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { createLogger } from "../log.js";
import { afterCommit, openDatabase, withTransaction, type Database } from "./database.js";
import { inDryRun, outsideDryRun, runAsDryRun } from "./dry-run.js";
import { GroupCommit } from "./group-commit.js";

/**
 * Dry runs on real PostgreSQL (docs/design/edge.md#dry-run): what a dry run writes through a
 * service's pool — lone queries, the code's own transactions, a group commit — is gone after it,
 * while it sees its own writes inside; a caught failure leaves it usable; a stray COMMIT or
 * ROLLBACK cannot end its transaction; commit hooks do not run; outside it, writes commit.
 */
const log = createLogger("dry-run-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! dry-run.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

(pgUp ? describe : describe.skip)("dry runs on real PostgreSQL (SKIPPED when none is reachable)", () => {
  let tdb: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "dry_run_test", poolSize: 5, log });
    await db.pool.query("CREATE TABLE things (id serial PRIMARY KEY, body text NOT NULL UNIQUE)");
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
  beforeEach(async () => {
    await db.pool.query("TRUNCATE things");
  });

  const bodies = async () =>
    (await db.pool.query<{ body: string }>("SELECT body FROM things ORDER BY body")).rows.map((r) => r.body);
  const insert = (body: string) => db.pool.query("INSERT INTO things (body) VALUES ($1)", [body]);

  it("keeps nothing of lone queries and transactions, and sees its own writes inside", async () => {
    await insert("before");
    const seen = await runAsDryRun(async () => {
      expect(inDryRun()).toBe(true);
      await insert("lone");
      await withTransaction(db.pool, async (tx) => {
        await tx.query("INSERT INTO things (body) VALUES ('in a transaction')");
      });
      return bodies();
    });
    expect(seen).toEqual(["before", "in a transaction", "lone"]);
    expect(inDryRun()).toBe(false);
    expect(await bodies()).toEqual(["before"]);
  });

  it("stays usable after a failure the code catches, inside a transaction or alone", async () => {
    await runAsDryRun(async () => {
      await insert("one");
      await expect(insert("one")).rejects.toThrow(/duplicate key/);
      await expect(
        withTransaction(db.pool, async (tx) => {
          await tx.query("INSERT INTO things (body) VALUES ('two')");
          await tx.query("INSERT INTO things (body) VALUES ('one')");
        }),
      ).rejects.toThrow(/duplicate key/);
      await insert("three");
      // the failed transaction's own row went with it; the rest is still there
      expect(await bodies()).toEqual(["one", "three"]);
    });
    expect(await bodies()).toEqual([]);
  });

  it("lets no stray COMMIT or ROLLBACK end its transaction", async () => {
    await runAsDryRun(async () => {
      await insert("before the stray statements");
      await db.pool.query("COMMIT");
      const c = await db.pool.connect();
      await c.query("ROLLBACK");
      await c.query("COMMIT");
      c.release();
      await insert("after them");
    });
    expect(await bodies()).toEqual([]);
  });

  it("runs no commit hook, writes a group commit's item alone, and leaves loops started outside it alone", async () => {
    let hooks = 0;
    const batches: number[] = [];
    const gc = new GroupCommit<string, string>(
      async (items) => {
        batches.push(items.length);
        for (const i of items) await insert(i);
        return items;
      },
      async (item) => {
        await insert(item);
        return item;
      },
      10,
    );
    await runAsDryRun(async () => {
      await withTransaction(db.pool, async (tx) => {
        await tx.query("INSERT INTO things (body) VALUES ('hooked')");
        afterCommit(tx, () => hooks++);
      });
      expect(await gc.submit("grouped")).toBe("grouped");
      // what runs outside the dry run writes for real, even when started inside it
      await outsideDryRun(() => insert("outside"));
    });
    expect({ hooks, batches, kept: await bodies() }).toEqual({ hooks: 0, batches: [], kept: ["outside"] });
    // and without a dry run everything commits, hooks included
    await withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO things (body) VALUES ('real')");
      afterCommit(tx, () => hooks++);
    });
    expect(await gc.submit("real grouped")).toBe("real grouped");
    expect({ hooks, kept: await bodies() }).toEqual({ hooks: 1, kept: ["outside", "real", "real grouped"] });
  });
});
