import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  createLogger,
  DEFAULT_ALLOWED_PORTS,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  withTransaction,
  type Database,
} from "@aps/platform";
import {
  ADMIN_DATABASE_URL,
  createTestDatabase,
  eventually,
  hasPostgres,
  waitUntil,
  type TestDatabase,
} from "@aps/testkit";
import type { PublicEvent } from "../events/public-events.js";
import { DeliveryWorker } from "../webhooks/worker.js";
import { feedHead, materialise, type CursorHook } from "./cursor.js";
import { FEED_LOCK, ingest } from "./feed.js";
import { applyModeration } from "./hidden.js";
import { WebhookStore } from "./webhooks.js";

/**
 * Each webhook's cursor over the feed (docs/design/notifications.md#per-endpoint-feed-cursor), on the real PostgreSQL:
 * the ingest writes the feed row and nothing per webhook; a new webhook starts at the feed's head;
 * an endpoint's window holds at most `pendingMax` pending deliveries, the rest waiting in the feed
 * behind its cursor, which moves past the events it does not subscribe to; a hide waits for a
 * materialisation in flight and redacts what it queued.
 */
const log = createLogger("notifications-cursor-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! cursor.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)(
  "webhook cursors over the feed (real PostgreSQL; SKIPPED when none is reachable)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let hooks: WebhookStore;
    let n = 0;
    const servers: Server[] = [];
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      hooks = new WebhookStore(db.pool);
    });
    afterAll(async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
      await db?.close();
      await tdb?.drop();
    });

    const event = (type: string, postId: string): PublicEvent => ({
      type: type as PublicEvent["type"],
      postId,
      actorId: "ag_a",
      postAuthorId: "ag_a",
      audience: "none",
      data: { postId, authorId: "ag_a", title: `about ${postId}`, link: `/v1/posts/${postId}` },
    });
    const store = (e: PublicEvent) =>
      withTransaction(db.pool, (tx) =>
        ingest(tx, { eventId: `ev_${++n}`, occurredAt: new Date().toISOString() }, [e], undefined, () => undefined),
      );
    /** What the worker's claim does for endpoint `id`: lock it, then queue its window. */
    const fill = (id: string, pendingMax = 100) =>
      withTransaction(db.pool, async (tx) => {
        const h = await tx.query<CursorHook>(
          "SELECT id, events, feed_cursor::text FROM webhooks WHERE id = $1 FOR UPDATE",
          [id],
        );
        return materialise(tx, h.rows, await feedHead(tx), pendingMax);
      });
    const deliveries = async (id: string) =>
      (
        await db.pool.query<{ feed_seq: string; type: string; status: string; body: string; id: string }>(
          "SELECT feed_seq::text, type, status, body, id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY seq",
          [id],
        )
      ).rows;
    const hookRow = async (id: string) =>
      (
        await db.pool.query<{ feed_cursor: string; window_full: boolean; xmin: string }>(
          "SELECT feed_cursor::text, window_full, xmin::text FROM webhooks WHERE id = $1",
          [id],
        )
      ).rows[0]!;

    it("the ingest writes no delivery and touches no webhook; a new webhook starts at the feed's head", async () => {
      const early = await hooks.create("ag_1", "https://a.example/h", ["*"], "s");
      await store(event("post.created", "p_1"));
      const late = await hooks.create("ag_2", "https://b.example/h", ["*"], "s");
      const before = await hookRow(early.id);
      const r = await store(event("post.created", "p_2"));
      expect(r.stored).toBe(1);
      expect(await deliveries(early.id)).toEqual([]);
      expect((await hookRow(early.id)).xmin).toBe(before.xmin); // not written
      // the worker's claim queues them: the early webhook both events, the late one only the second
      expect(await fill(early.id)).toBe(2);
      expect(await fill(late.id)).toBe(1);
      const [e1, e2] = await deliveries(early.id);
      const [l2] = await deliveries(late.id);
      expect(JSON.parse(e1!.body).data.postId).toBe("p_1");
      expect(JSON.parse(e2!.body)).toMatchObject({
        type: "post.created",
        cursor: e2!.feed_seq,
        data: { postId: "p_2" },
      });
      expect(Object.keys(JSON.parse(l2!.body))).toEqual(["type", "timestamp", "eventId", "cursor", "livemode", "data"]);
      expect(l2!.feed_seq).toBe(e2!.feed_seq);
      expect(l2!.id).not.toBe(e2!.id); // a webhook-id of its own per endpoint
      expect((await hookRow(late.id)).feed_cursor).toBe(e2!.feed_seq);
      // nothing new: nothing queued, nothing moves
      expect(await fill(early.id)).toBe(0);
      expect(await deliveries(early.id)).toHaveLength(2);
    });

    it("a window holds at most pendingMax deliveries; the cursor moves past types not subscribed", async () => {
      const h = await hooks.create("ag_3", "https://c.example/h", ["comment.created"], "s");
      for (let i = 0; i < 4; i++) {
        await store(event("post.created", `p_w${i}`));
        await store(event("comment.created", `p_w${i}`));
      }
      await store(event("post.created", "p_tail"));
      const head = await withTransaction(db.pool, (tx) => feedHead(tx));
      expect(await fill(h.id, 3)).toBe(3);
      const first = await deliveries(h.id);
      expect(first.map((d) => d.type)).toEqual(["comment.created", "comment.created", "comment.created"]);
      expect(await hookRow(h.id)).toMatchObject({ feed_cursor: first[2]!.feed_seq, window_full: true });
      expect(await fill(h.id, 3)).toBe(0); // full: nothing more until one is done
      await db.pool.query("UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = $1", [first[0]!.id]);
      expect(await fill(h.id, 3)).toBe(1);
      // the fourth comment, then past the trailing post.created it does not subscribe to
      expect((await deliveries(h.id)).map((d) => d.type)).toHaveLength(4);
      await db.pool.query("UPDATE webhook_deliveries SET status = 'succeeded' WHERE webhook_id = $1", [h.id]);
      expect(await fill(h.id, 3)).toBe(0);
      expect(await hookRow(h.id)).toMatchObject({ feed_cursor: head.toString(), window_full: false });
    });

    it("a hide waits for a materialisation in flight, then redacts the delivery it queued", async () => {
      const h = await hooks.create("ag_4", "https://d.example/h", ["*"], "s");
      await store(event("post.created", "p_secret"));
      const client = await db.pool.connect();
      let hidden: { feedRows: number; deliveries: number } | undefined;
      try {
        await client.query("BEGIN");
        const row = await client.query<CursorHook>(
          "SELECT id, events, feed_cursor::text FROM webhooks WHERE id = $1 FOR UPDATE",
          [h.id],
        );
        expect(await materialise(client as never, row.rows, await feedHead(client), 100)).toBe(1);
        // the hide starts while the copy is uncommitted: it must wait
        const hide = withTransaction(db.pool, async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock($1)", [FEED_LOCK]);
          return applyModeration(tx, {
            postId: "p_secret",
            commentId: "",
            hidden: true,
            occurredAt: new Date().toISOString(),
          });
        }).then((r) => (hidden = r));
        // the hide has reached the materialisation's lock and waits for it (pg_locks: an advisory
        // lock asked for and not granted in this database)
        await waitUntil(
          "the hide to wait for the materialisation's lock",
          async () =>
            (
              await db.pool.query(
                `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                 WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted`,
              )
            ).rowCount! > 0,
          { timeoutMs: 10_000, intervalMs: 20 },
        );
        expect(hidden).toBeUndefined();
        await client.query("COMMIT");
        await hide;
      } finally {
        client.release();
      }
      expect(hidden).toEqual({ feedRows: 1, deliveries: 1 });
      const [d] = await deliveries(h.id);
      expect(d!.body).not.toContain("about p_secret");
      expect(JSON.parse(d!.body).data).toMatchObject({ hidden: true });
    });

    it("through the worker: a failing endpoint keeps pendingMax deliveries, the rest in the feed; a healthy one gets all", async () => {
      await db.pool.query("UPDATE webhooks SET disabled_at = now(), disabled_reason = 'test'"); // earlier cases' hooks
      const got: string[] = [];
      const ok = createServer((req, res) => {
        let body = "";
        req.on("data", (c: Buffer) => (body += c.toString()));
        req.on("end", () => (got.push(JSON.parse(body).eventId), res.writeHead(204).end()));
      });
      const bad = createServer((req, res) => req.resume().on("end", () => res.writeHead(503).end()));
      servers.push(ok, bad);
      for (const s of [ok, bad]) await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
      const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/h`;
      const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
      const healthy = await hooks.create("ag_5", url(ok), ["*"], secret);
      const failing = await hooks.create("ag_6", url(bad), ["*"], secret);
      const worker = new DeliveryWorker(
        db.pool,
        {
          retrySchedule: [60_000],
          attemptTimeoutMs: 2_000,
          concurrency: 4,
          pollMs: 50,
          policy: { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS },
          pendingMax: 5,
        },
        log,
      );
      worker.start();
      try {
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) {
          await store(event("post.created", `p_f${i}`));
          ids.push(`ev_${n}`);
        }
        await eventually(async () => expect([...got].sort()).toEqual([...ids].sort()), 15_000, 50);
        await eventually(async () => {
          const f = await deliveries(failing.id);
          expect(f).toHaveLength(5); // the window; the other 15 events wait in the feed
          expect(f.every((d) => d.status === "pending")).toBe(true);
        }, 5_000);
        await eventually(async () => expect(await hookRow(failing.id)).toMatchObject({ window_full: true }), 5_000);
        expect(await deliveries(healthy.id)).toHaveLength(20);
      } finally {
        await worker.stop();
      }
    }, 30_000);
  },
);
