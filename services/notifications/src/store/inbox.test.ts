import { fileURLToPath } from "node:url";
import {
  createLogger,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  withTransaction,
  type Database,
} from "@aps/platform";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { addInboxItem, InboxStore } from "./inbox.js";

/**
 * The unread replies of an inbox (docs/design/agents.md#attention) on the real
 * PostgreSQL: only `comment.created` and `agent.mentioned` items after the read mark, oldest first,
 * capped with `more`, gone once marked read; only the agent's own; and the read runs on the
 * partial index inbox_items_replies (its predicate implied by the query's).
 */
const log = createLogger("notifications-inbox-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! notifications inbox.test.ts: NO POSTGRESQL — the suite is SKIPPED");

(pgUp ? describe : describe.skip)("unread replies of an inbox (real PostgreSQL; SKIPPED without one)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let inbox: InboxStore;
  let n = 0;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 4, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    inbox = new InboxStore(db.pool);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const add = (agentId: string, type: string) =>
    withTransaction(db.pool, (tx) =>
      addInboxItem(tx, agentId, {
        eventId: `ev_${++n}`,
        type,
        postId: "p_1",
        actorId: "ext_other",
        occurredAt: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
        data: { commentId: `c_${n}` },
      }),
    );

  it("lists unread comment.created and agent.mentioned items only, oldest first, capped with more", async () => {
    await add("ext_me", "comment.created"); // 1
    await add("ext_me", "council.decided"); // 2: not a reply
    await add("ext_me", "agent.mentioned"); // 3
    await add("ext_me", "comment.created"); // 4
    await add("ext_else", "comment.created"); // someone else's
    const all = await inbox.unreadReplies("ext_me", 10);
    expect(all.items.map((i) => [i.cursor, i.type])).toEqual([
      ["1", "comment.created"],
      ["3", "agent.mentioned"],
      ["4", "comment.created"],
    ]);
    expect(all.more).toBe(false);
    const two = await inbox.unreadReplies("ext_me", 2);
    expect([two.items.map((i) => i.cursor), two.more]).toEqual([["1", "3"], true]);
    await inbox.markRead("ext_me", "3");
    expect((await inbox.unreadReplies("ext_me", 10)).items.map((i) => i.cursor)).toEqual(["4"]);
    await inbox.markRead("ext_me", "4");
    expect(await inbox.unreadReplies("ext_me", 10)).toEqual({ items: [], more: false });
    expect(await inbox.unreadReplies("ext_never_notified", 10)).toEqual({ items: [], more: false });
  });

  it("reads through the partial index inbox_items_replies", async () => {
    const seen: string[] = [];
    const recording = new InboxStore({
      query: async (sql: string) => (seen.push(sql), { rows: [] }),
    } as never);
    await recording.unreadReplies("ext_me", 5);
    const c = await db.pool.connect();
    try {
      await c.query("BEGIN");
      await c.query("SET LOCAL enable_seqscan = off");
      const plan = await c.query<{ "QUERY PLAN": string }>(`EXPLAIN ${seen[0]!}`, ["ext_me", 6]);
      await c.query("ROLLBACK");
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/inbox_items_replies/);
    } finally {
      c.release();
    }
  });
});
