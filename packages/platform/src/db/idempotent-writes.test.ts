import { forum } from "@aps/proto";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { createLogger } from "../log.js";
import { openDatabase, type Database } from "./database.js";
import { migrate } from "./migrate.js";
import { PLATFORM_MIGRATIONS_DIR } from "./paths.js";
import { IDEMPOTENCY_OUTCOME_TTL_MS, idempotencyScope, IdempotentWrites } from "./idempotent-writes.js";

/**
 * Outcomes of keyed writes stored with the write (docs/design/edge.md#idempotency-key), on the real PostgreSQL: one
 * write per (agent, key) however many retries (sequential or concurrent), the first response
 * replayed from its stored bytes, a failed write leaves the key free, another request under the
 * key is refused, and keys expire after 24 h.
 */
const log = createLogger("idempotent-writes-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! idempotent-writes.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

(pgUp ? describe : describe.skip)("IdempotentWrites on real PostgreSQL (SKIPPED when none is reachable)", () => {
  let tdb: TestDatabase;
  let db: Database;
  const clock = new SetClock(new Date("2026-03-01T10:00:00Z"));
  let writes: IdempotentWrites;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "idem_test", poolSize: 25, log });
    await migrate(db, PLATFORM_MIGRATIONS_DIR, log);
    await db.pool.query("CREATE TABLE things (id serial PRIMARY KEY, body text NOT NULL)");
    writes = new IdempotentWrites(db.pool, clock);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const things = async () =>
    Number((await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM things")).rows[0]!.n);
  /** A write that inserts a row and answers a Comment naming it; counts its calls. */
  function writer(body: string) {
    const calls = { n: 0 };
    const write = async (tx: import("./database.js").Tx): Promise<forum.Comment> => {
      calls.n++;
      const r = await tx.query<{ id: number }>("INSERT INTO things (body) VALUES ($1) RETURNING id", [body]);
      return {
        id: `c_${r.rows[0]!.id}`,
        postId: "p_1",
        body,
        author: { agentId: "ag_1", name: "A" },
        createdAt: "",
        hiddenAt: "",
        hiddenReason: "",
        parentId: "",
        replyCount: 0,
        revision: 1,
        editedAt: "",
        mentions: [],
      };
    };
    return { calls, write };
  }

  it("writes once per key and replays the first response, even after other writes", async () => {
    const before = await things();
    const scope = idempotencyScope("ag_1", "key-seq", "test.Create", { body: "one" });
    const w = writer("one");
    const first = await writes.run(scope, forum.Comment, w.write);
    await writes.run(undefined, forum.Comment, writer("other").write);
    const again = await writes.run(scope, forum.Comment, w.write);
    expect(again).toEqual(first);
    expect(w.calls.n).toBe(1);
    expect(await things()).toBe(before + 2);
    expect(await writes.replay(scope, forum.Comment)).toEqual(first);
  });

  it("runs 20 concurrent calls with one key as one write", async () => {
    const before = await things();
    const scope = idempotencyScope("ag_1", "key-concurrent", "test.Create", { body: "two" });
    const w = writer("two");
    const answers = await Promise.all(Array.from({ length: 20 }, () => writes.run(scope, forum.Comment, w.write)));
    expect(w.calls.n).toBe(1);
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(await things()).toBe(before + 1);
  });

  it("refuses the key for another request or operation (422) and writes nothing", async () => {
    const scope = idempotencyScope("ag_1", "key-mismatch", "test.Create", { body: "three" })!;
    await writes.run(scope, forum.Comment, writer("three").write);
    const before = await things();
    const other = writer("four");
    await expect(writes.run({ ...scope, request: { body: "four" } }, forum.Comment, other.write)).rejects.toMatchObject(
      {
        code: "idempotency_mismatch",
      },
    );
    await expect(writes.run({ ...scope, operation: "test.Other" }, forum.Comment, other.write)).rejects.toMatchObject({
      code: "idempotency_mismatch",
    });
    await expect(writes.replay({ ...scope, request: { body: "four" } }, forum.Comment)).rejects.toMatchObject({
      code: "idempotency_mismatch",
    });
    expect(other.calls.n).toBe(0);
    expect(await things()).toBe(before);
    // the key belongs to its agent: another agent may use the same text
    const mine = await writes.run({ ...scope, agentId: "ag_2" }, forum.Comment, writer("three").write);
    expect(mine.id).not.toBe((await writes.replay(scope, forum.Comment))!.id);
  });

  it("leaves the key free when the write fails: nothing was written, the retry runs", async () => {
    const scope = idempotencyScope("ag_1", "key-fails", "test.Create", { body: "five" });
    const before = await things();
    await expect(
      writes.run(scope, forum.Comment, async (tx) => {
        await tx.query("INSERT INTO things (body) VALUES ('five')");
        throw new Error("the write failed after its first statement");
      }),
    ).rejects.toThrow("the write failed");
    expect(await things()).toBe(before);
    expect(await writes.replay(scope, forum.Comment)).toBeUndefined();
    const w = writer("five");
    await writes.run(scope, forum.Comment, w.write);
    expect(w.calls.n).toBe(1);
    expect(await things()).toBe(before + 1);
  });

  it("forgets a key after 24 h: the same key then writes again, and old outcomes are swept", async () => {
    const scope = idempotencyScope("ag_1", "key-expires", "test.Create", { body: "six" });
    const w = writer("six");
    const first = await writes.run(scope, forum.Comment, w.write);
    clock.at = new Date(clock.at.getTime() + IDEMPOTENCY_OUTCOME_TTL_MS - 1);
    expect(await writes.run(scope, forum.Comment, w.write)).toEqual(first);
    expect(w.calls.n).toBe(1);
    clock.at = new Date(clock.at.getTime() + 2);
    expect(await writes.replay(scope, forum.Comment)).toBeUndefined();
    const later = await writes.run(scope, forum.Comment, w.write);
    expect(w.calls.n).toBe(2);
    expect(later.id).not.toBe(first.id);
    // expired outcomes are deleted by the retention job (idempotency_outcomes, docs/design/operations.md#retention; retention.test.ts)
  });

  it("without a key, every call writes", async () => {
    const before = await things();
    const w = writer("eight");
    await writes.run(idempotencyScope("ag_1", "", "test.Create", {}), forum.Comment, w.write);
    await writes.run(undefined, forum.Comment, w.write);
    expect(w.calls.n).toBe(2);
    expect(await things()).toBe(before + 2);
  });
});
