import { fileURLToPath } from "node:url";
import {
  createLogger,
  metricsText,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  withTransaction,
  type Database,
} from "@aps/platform";
import { createTestDatabase, hasPostgres, waitUntil, type TestDatabase } from "@aps/testkit";
import type { PublicEvent } from "../events/public-events.js";
import { audiencePage, FanoutWorker, runFanoutPage, type PageHook } from "./fanout.js";
import { WatchStore, watchersOf } from "./watches.js";
import { ingest } from "./feed.js";

/**
 * The inbox fan-out of a large audience, paged outside the feed lock (docs/design/notifications.md#paged-inbox-fan-out), on the real PostgreSQL: a Council decision on a post with 5,000 voters (seeded
 * in SQL) commits its feed row and a job, not 5,000 inbox items, under FEED_LOCK; another ingest
 * commits while the fan-out's pages run; every voter is notified exactly once (muted agents and
 * the actor never); a crash mid-page rolls that page back and another replica resumes after the
 * last committed one; a redone page writes nothing twice; two replicas take different jobs.
 */
const log = createLogger("notifications-fanout-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! notifications fanout.test.ts: NO POSTGRESQL — the suite is SKIPPED");

const VOTERS = 5_000;
const PAGE = 500;
const POST = "p_big";
const AUTHOR = "ext_author";
const noop = () => {};

/** A `council.decided` of POST as the public-event rule derives it (audience: every participant). */
const decided = (outcome: string): PublicEvent => ({
  type: "council.decided",
  postId: POST,
  postAuthorId: AUTHOR,
  audience: "post-participants",
  data: { postId: POST, outcome, approvals: 3, rejections: 0, link: `/v1/posts/${POST}` },
});

(pgUp ? describe : describe.skip)("paged inbox fan-out (real PostgreSQL; SKIPPED without one)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let n = 0;
  const source = () => ({ eventId: `ev_${String(++n).padStart(4, "0")}`, occurredAt: new Date().toISOString() });
  const count = async (sql: string, args: unknown[] = []) =>
    Number((await db.pool.query<{ n: string }>(sql, args)).rows[0]!.n);
  const itemsOf = (eventId: string) => count("SELECT count(*) AS n FROM inbox_items WHERE event_id = $1", [eventId]);
  const drain = async (pool = db.pool, hook?: PageHook) => {
    let pages = 0;
    while (await runFanoutPage(pool, PAGE, hook)) pages++;
    return pages;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 6, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    // the author, 5,000 voters (the first 200 also commented), a watcher who did not take part, and
    // a voter who muted the post
    await db.pool.query("INSERT INTO participation (post_id, agent_id, role) VALUES ($1, $2, 'author')", [
      POST,
      AUTHOR,
    ]);
    for (const [role, upTo] of [
      ["voter", VOTERS],
      ["commenter", 200],
    ] as const)
      await db.pool.query(
        `INSERT INTO participation (post_id, agent_id, role)
         SELECT $1, 'ext_v' || lpad(i::text, 5, '0'), $2 FROM generate_series(1, $3::int) i`,
        [POST, role, upTo],
      );
    await db.pool.query(
      "INSERT INTO post_watches (post_id, agent_id, level) VALUES ($1, 'ext_watcher', 'watching'), ($1, 'ext_v00007', 'muted')",
      [POST],
    );
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  // author + 5,000 voters + the watcher − the one who muted
  const AUDIENCE = 1 + VOTERS + 1 - 1;

  it("a decision on a post with 5,000 voters: the feed lock covers the feed row, not the fan-out; every voter notified once; another ingest commits meanwhile", async () => {
    const src = source();
    let woken = 0;
    const r = await withTransaction(db.pool, (tx) =>
      ingest(tx, src, [decided("accepted")], undefined, noop, 500, { page: PAGE, wake: () => woken++ }),
    );
    // the ingest (under FEED_LOCK) wrote the feed row and one job; no inbox item of the audience
    expect({ stored: r.stored, notified: r.notified, paged: r.paged }).toEqual({ stored: 1, notified: 0, paged: 1 });
    expect(woken).toBe(1);
    expect(await itemsOf(src.eventId)).toBe(0);

    // while a page of the fan-out is open (its transaction holds its items' locks), another event
    // is ingested under FEED_LOCK and commits: the fan-out never holds the lock
    const other = source();
    const during: { page: number; stored: number; notified: number }[] = [];
    const hook: PageHook = async ({ page }) => {
      if (page !== 3) return;
      const x = await withTransaction(db.pool, async (tx) => {
        await tx.query("SET LOCAL lock_timeout = '5s'");
        return ingest(
          tx,
          other,
          [
            {
              type: "post.created",
              postId: "p_other",
              actorId: "ext_other",
              postAuthorId: "ext_other",
              audience: "post-author",
              data: { postId: "p_other" },
            },
          ],
          { postId: "p_other", agentId: "ext_other", role: "author" },
          noop,
        );
      });
      during.push({ page, stored: x.stored, notified: x.notified });
    };
    const pages = await drain(db.pool, hook);
    expect(during).toEqual([{ page: 3, stored: 1, notified: 0 }]);
    expect(pages).toBe(Math.ceil(AUDIENCE / PAGE));
    // exactly once each: the author, every voter (the 200 commenters among them once), the watcher;
    // never the voter who muted the post
    expect(await itemsOf(src.eventId)).toBe(AUDIENCE);
    expect(
      await count("SELECT count(DISTINCT agent_id) AS n FROM inbox_items WHERE event_id = $1", [src.eventId]),
    ).toBe(AUDIENCE);
    expect(
      await count("SELECT count(*) AS n FROM inbox_items WHERE event_id = $1 AND agent_id = ANY($2)", [
        src.eventId,
        ["ext_v00007"],
      ]),
    ).toBe(0);
    expect(
      await count("SELECT count(*) AS n FROM inbox_items WHERE event_id = $1 AND agent_id = ANY($2)", [
        src.eventId,
        [AUTHOR, "ext_watcher", "ext_v00001", "ext_v05000"],
      ]),
    ).toBe(4);
    // each voter's item has the next number of its inbox, and the data of the feed row
    expect(await count("SELECT count(*) AS n FROM inbox_state WHERE agent_id LIKE 'ext_v%' AND last_seq = 1")).toBe(
      VOTERS - 1,
    );
    const item = await db.pool.query<{ type: string; data: Record<string, unknown> }>(
      "SELECT type, data FROM inbox_items WHERE agent_id = 'ext_v04242' AND event_id = $1",
      [src.eventId],
    );
    expect(item.rows).toEqual([{ type: "council.decided", data: decided("accepted").data }]);
    expect(await count("SELECT count(*) AS n FROM inbox_fanout")).toBe(0);
  });

  it("a crash mid-page rolls the page back; another replica resumes after the last committed page; a redone page writes nothing twice", async () => {
    const src = source();
    await withTransaction(db.pool, (tx) =>
      ingest(tx, src, [decided("rejected")], undefined, noop, 500, { page: PAGE, wake: noop }),
    );
    // page 1 commits (500 read: the author and ext_v00001 … ext_v00499, who muted one not written);
    // page 2 "crashes" after writing its items, before its cursor moves
    expect(await runFanoutPage(db.pool, PAGE)).toMatchObject({ read: PAGE, written: PAGE - 1, done: false });
    await expect(
      runFanoutPage(db.pool, PAGE, ({ page }) => {
        if (page === 2) throw new Error("replica killed mid-page");
      }),
    ).rejects.toThrow("replica killed mid-page");
    expect(await itemsOf(src.eventId)).toBe(PAGE - 1);
    const job = await db.pool.query<{ after_agent: string; pages: number }>(
      "SELECT after_agent, pages FROM inbox_fanout",
    );
    expect(job.rows).toEqual([{ after_agent: "ext_v00499", pages: 1 }]);

    // another replica (its own pool) resumes from there
    const other = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 2, log });
    try {
      expect(await drain(other.pool)).toBe(Math.ceil(AUDIENCE / PAGE) - 1);
    } finally {
      await other.close();
    }
    expect(await itemsOf(src.eventId)).toBe(AUDIENCE);

    // a page redone (its cursor put back to the start) finds every recipient notified: writes nothing
    await db.pool.query(
      "INSERT INTO inbox_fanout (feed_seq, post_id, author_id, roles, watch_max, actor_id) SELECT seq, $2, $3, $4, 500, NULL FROM feed_events WHERE event_id = $1",
      [src.eventId, POST, AUTHOR, ["commenter", "voter"]],
    );
    const redone: number[] = [];
    await drain(db.pool, ({ written }) => void redone.push(written));
    expect(redone.length).toBe(Math.ceil(AUDIENCE / PAGE));
    expect(redone.every((w) => w === 0)).toBe(true);
    expect(await itemsOf(src.eventId)).toBe(AUDIENCE);
  });

  it("replicas share the queue: a job one replica holds is skipped by the other (FOR UPDATE SKIP LOCKED)", async () => {
    // a second post, its own 600 voters: the two jobs' pages lock different inbox rows
    await db.pool.query(
      "INSERT INTO participation (post_id, agent_id, role) VALUES ('p_two', 'ext_author2', 'author')",
    );
    await db.pool.query(
      `INSERT INTO participation (post_id, agent_id, role)
       SELECT 'p_two', 'ext_x' || lpad(i::text, 5, '0'), 'voter' FROM generate_series(1, 600) i`,
    );
    const a = source();
    const b = source();
    await withTransaction(db.pool, (tx) =>
      ingest(tx, a, [decided("accepted")], undefined, noop, 500, { page: PAGE, wake: noop }),
    );
    await withTransaction(db.pool, (tx) =>
      ingest(
        tx,
        b,
        [{ ...decided("accepted"), postId: "p_two", postAuthorId: "ext_author2", data: { postId: "p_two" } }],
        undefined,
        noop,
        500,
        { page: PAGE, wake: noop },
      ),
    );
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    // replica 1 holds the oldest job (a's) mid-page; replica 2 meanwhile takes b's
    const first = runFanoutPage(db.pool, PAGE, async () => {
      entered();
      await held;
    });
    await inside;
    const second = await runFanoutPage(db.pool, PAGE);
    release();
    const one = await first;
    expect(one?.feedSeq).toBeDefined();
    expect(second?.feedSeq).toBeDefined();
    expect(second!.feedSeq).not.toBe(one!.feedSeq);
    await drain();
    expect([await itemsOf(a.eventId), await itemsOf(b.eventId)]).toEqual([AUDIENCE, 601]);
  });

  it("the worker runs a queued fan-out when woken; an audience of at most a page is still written inline", async () => {
    const worker = new FanoutWorker(db.pool, { pageSize: PAGE, pollMs: 60_000 }, log);
    worker.start();
    try {
      const src = source();
      await withTransaction(db.pool, (tx) =>
        ingest(tx, src, [decided("accepted")], undefined, noop, 500, { page: PAGE, wake: () => worker.notify() }),
      );
      await waitUntil("the fan-out's inbox items", async () => (await itemsOf(src.eventId)) >= AUDIENCE, {
        timeoutMs: 20_000,
      });
      expect(await itemsOf(src.eventId)).toBe(AUDIENCE);

      // a post with 3 participants: inline, in the ingest's transaction, no job
      await db.pool.query(
        "INSERT INTO participation (post_id, agent_id, role) VALUES ('p_small', 'ext_a', 'author'), ('p_small', 'ext_b', 'voter'), ('p_small', 'ext_c', 'commenter')",
      );
      const small = source();
      const r = await withTransaction(db.pool, (tx) =>
        ingest(
          tx,
          small,
          [{ type: "post.edited", postId: "p_small", actorId: "ext_a", audience: "post-participants", data: {} }],
          undefined,
          noop,
          500,
          { page: PAGE, wake: noop },
        ),
      );
      expect({ notified: r.notified, paged: r.paged }).toEqual({ notified: 2, paged: 0 });
    } finally {
      await worker.stop();
    }
  });

  it('the queue shows as aps_work_queue{queue="inbox_fanout"}: its depth and oldest age while a job waits, 0 when done', async () => {
    let release = noop;
    const gate = new Promise<void>((r) => (release = r));
    const worker = new FanoutWorker(db.pool, { pageSize: PAGE, pollMs: 60_000, hook: () => gate }, log);
    /** The gauge's value for `measure`, from this process's exposition. */
    const gauge = async (measure: string) => {
      const line = (await metricsText()).body
        .split("\n")
        .find((l) => l.startsWith(`aps_work_queue{queue="inbox_fanout",measure="${measure}"}`));
      return line === undefined ? undefined : Number(line.split(" ").at(-1));
    };
    expect(await gauge("depth")).toBeUndefined(); // not registered before the worker starts
    worker.start();
    try {
      const src = source();
      await withTransaction(db.pool, async (tx) => {
        const r = await ingest(tx, src, [decided("rejected")], undefined, noop, 500, {
          page: PAGE,
          wake: () => worker.notify(),
        });
        // the job enters the queue a minute old (as if queued a minute ago): its age, without waiting for it
        await tx.query("UPDATE inbox_fanout SET created_at = created_at - interval '60 seconds'");
        return r;
      });
      expect(await gauge("depth")).toBe(1);
      const oldest = await gauge("oldest_seconds");
      expect(oldest).toBeGreaterThanOrEqual(60);
      expect(oldest).toBeLessThan(3_600); // seconds, not milliseconds
      release();
      await waitUntil("the fan-out's inbox items", async () => (await itemsOf(src.eventId)) >= AUDIENCE, {
        timeoutMs: 20_000,
      });
      expect([await gauge("depth"), await gauge("oldest_seconds")]).toEqual([0, 0]);
    } finally {
      release();
      await worker.stop();
    }
    expect(await gauge("depth")).toBeUndefined();
  });

  it("the watcher bound keeps the highest Sagacity, then the longest-standing agents, not the first to watch (docs/design/notifications.md#watch-levels)", async () => {
    const post = "p_watched";
    const watches = new WatchStore(db.pool);
    // three fresh agents watch first, then two established ones, then one of a release before (no standing)
    for (const i of [1, 2, 3])
      await watches.set(`ext_fresh${i}`, post, "watching", { sagacity: 0, joinedAt: new Date().toISOString() });
    await watches.set("ext_elder", post, "watching", { sagacity: 0, joinedAt: "2025-01-01T00:00:00.000Z" });
    await watches.set("ext_sage", post, "watching", { sagacity: 40, joinedAt: "2026-06-01T00:00:00.000Z" });
    await watches.set("ext_unknown", post, "watching");
    const first = (max: number) => withTransaction(db.pool, (tx) => watchersOf(tx, post, max));
    expect(await first(2)).toEqual(["ext_sage", "ext_elder"]);
    expect((await first(10)).at(-1)).toBe("ext_unknown");
    // the audience of a post event takes the same watchers (the author aside)
    const page = await withTransaction(db.pool, (tx) =>
      audiencePage(tx, { postId: post, authorId: "ext_author_w", roles: [], watchMax: 2 }, "", 100),
    );
    expect(page.sort()).toEqual(["ext_author_w", "ext_elder", "ext_sage"]);
    // a watcher's standing is refreshed when it sets its level again
    await watches.set("ext_fresh3", post, "watching", { sagacity: 99, joinedAt: new Date().toISOString() });
    expect(await first(1)).toEqual(["ext_fresh3"]);
  });
});
