import { fileURLToPath } from "node:url";
import {
  createLogger,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  withTransaction,
  type Database,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import type { PublicEvent } from "../events/public-events.js";
import { DEFAULT_PENDING_MAX, feedHead, materialise, type CursorHook } from "./cursor.js";
import { FeedStore, ingest } from "./feed.js";
import { applyModeration } from "./hidden.js";

/**
 * Hidden means hidden (docs/design/notifications.md#redaction-of-hidden-content) in the feed's store, on the real
 * PostgreSQL: a hide redacts the post's stored feed rows and their pending deliveries (not the sent
 * ones), events arriving after it are stored redacted, a comment's hide touches only its rows, and
 * moderation events apply in the order of their instants whatever order they arrive in.
 */
const log = createLogger("notifications-hidden-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! hidden.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)(
  "hidden content in the feed (real PostgreSQL; SKIPPED when none is reachable)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let n = 0;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      await db.pool.query(
        "INSERT INTO webhooks (id, agent_id, url, events, secret) VALUES ('wh_1', 'ag_o', 'https://x.example/h', '{*}', 's')",
      );
    });
    afterAll(async () => {
      await db?.close();
      await tdb?.drop();
    });

    const at = (min: number) => new Date(Date.UTC(2026, 0, 1, 0, min)).toISOString();
    // stores `e`, then queues the webhook's delivery of it as the delivery worker's claim does (docs/design/notifications.md#per-endpoint-feed-cursor)
    const store = async (e: PublicEvent, min: number) => {
      const r = await withTransaction(db.pool, (tx) =>
        ingest(tx, { eventId: `ev_${++n}`, occurredAt: at(min) }, [e], undefined, () => undefined),
      );
      await withTransaction(db.pool, async (tx) => {
        const hook = await tx.query<CursorHook>(
          "SELECT id, events, feed_cursor::text FROM webhooks WHERE id = 'wh_1' FOR UPDATE",
        );
        await materialise(tx, hook.rows, await feedHead(tx), DEFAULT_PENDING_MAX);
      });
      return r;
    };
    const created = (postId: string, title: string): PublicEvent => ({
      type: "post.created",
      postId,
      actorId: "ag_a",
      postAuthorId: "ag_a",
      audience: "none",
      data: { postId, authorId: "ag_a", title, kind: "free", status: "discussion", link: `/v1/posts/${postId}` },
    });
    const commented = (postId: string, commentId: string): PublicEvent => ({
      type: "comment.created",
      postId,
      actorId: "ag_b",
      postAuthorId: "ag_a",
      audience: "none",
      data: { postId, commentId, authorId: "ag_b", link: `/v1/posts/${postId}` },
    });
    const moderate = (postId: string, commentId: string, hidden: boolean, min: number) =>
      withTransaction(db.pool, (tx) => applyModeration(tx, { postId, commentId, hidden, occurredAt: at(min) }));
    const feedOf = async (postId: string) =>
      (await new FeedStore(db.pool).list(0n, [], 100)).filter((r) => r.data.postId === postId);
    const bodiesOf = async (postId: string) =>
      (
        await db.pool.query<{ status: string; body: string }>(
          "SELECT d.status, d.body FROM webhook_deliveries d JOIN feed_events f ON f.seq = d.feed_seq WHERE f.post_id = $1 ORDER BY d.seq",
          [postId],
        )
      ).rows;

    it("a hidden post: its feed rows and pending deliveries are redacted, a sent delivery is history, later events come redacted", async () => {
      await store(created("p_1", "Buy widgets"), 1);
      await store(created("p_2", "Innocent"), 1);
      await db.pool.query(
        "UPDATE webhook_deliveries SET status = 'succeeded' WHERE feed_seq = (SELECT seq FROM feed_events WHERE post_id = 'p_1')",
      );
      await store(
        {
          ...created("p_1", "Buy more widgets"),
          type: "post.edited",
          data: {
            postId: "p_1",
            editorId: "ag_a",
            revision: 2,
            title: "Buy more widgets",
            tags: ["ad"],
            link: "/v1/posts/p_1",
          },
        },
        2,
      );
      expect(await moderate("p_1", "", true, 3)).toEqual({ feedRows: 2, deliveries: 1 });

      const rows = await feedOf("p_1");
      expect(rows.map((r) => [r.type, r.data.title, r.data.hidden])).toEqual([
        ["post.created", "[hidden]", true],
        ["post.edited", "[hidden]", true],
      ]);
      expect(rows[1]!.data.tags).toEqual([]);
      const [sent, pending] = await bodiesOf("p_1");
      expect(sent!.body).toContain("Buy widgets"); // already delivered: not ours to take back
      expect(pending!.status).toBe("pending");
      expect(pending!.body).not.toContain("widgets");
      expect(JSON.parse(pending!.body)).toMatchObject({
        type: "post.edited",
        data: { title: "[hidden]", tags: [], hidden: true },
      });
      expect((await feedOf("p_2"))[0]!.data.title).toBe("Innocent");

      // an event arriving after the hide is stored redacted, in the feed and in its delivery
      await store(
        {
          ...created("p_1", "Widgets again"),
          type: "post.edited",
          data: {
            postId: "p_1",
            editorId: "ag_a",
            revision: 3,
            title: "Widgets again",
            tags: [],
            link: "/v1/posts/p_1",
          },
        },
        4,
      );
      expect((await feedOf("p_1")).at(-1)!.data).toMatchObject({ title: "[hidden]", hidden: true });
      expect((await bodiesOf("p_1")).at(-1)!.body).not.toContain("Widgets");
      // a redelivered hide finds nothing left to redact
      expect(await moderate("p_1", "", true, 3)).toEqual({ feedRows: 0, deliveries: 0 });
    });

    it("a hidden comment marks only its own rows; moderation applies in the order of its instants", async () => {
      await store(created("p_3", "Fine post"), 10);
      await store(commented("p_3", "c_1"), 11);
      await store(commented("p_3", "c_2"), 12);
      // the show (instant 20) arrives before the hide (instant 15): the hide is older and changes nothing
      expect(await moderate("p_3", "c_1", false, 20)).toEqual({ feedRows: 0, deliveries: 0 });
      expect(await moderate("p_3", "c_1", true, 15)).toEqual({ feedRows: 0, deliveries: 0 });
      expect((await feedOf("p_3")).map((r) => r.data.hidden ?? false)).toEqual([false, false, false]);
      // a later hide applies, to c_1's row only; the post keeps its title
      expect(await moderate("p_3", "c_1", true, 21)).toEqual({ feedRows: 1, deliveries: 1 });
      const rows = await feedOf("p_3");
      expect(rows.map((r) => [r.data.commentId ?? "", r.data.hidden ?? false])).toEqual([
        ["", false],
        ["c_1", true],
        ["c_2", false],
      ]);
      expect(rows[0]!.data.title).toBe("Fine post");
    });
  },
);
