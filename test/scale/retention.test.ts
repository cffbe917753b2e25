import { createServer, type Server } from "node:http";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { eventually, httpClient, waitUntil, type HttpRequest } from "@aps/testkit";
import { joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Bounded storage (docs/retention.md, docs/design/operations.md#retention): with every retention
 * shortened to RETAIN (and the job run every 300 ms), activity through the API fills every table
 * that only grows; once it is older than RETAIN the job has deleted it from every table, while the
 * rows of activity inside the retention stay through whole passes of every service's job (and the
 * last vote of each voter, which the vote history keeps whatever its age). The service still
 * answers: a feed cursor from the pruned past pages on, one past the newest is still a 400
 * (docs/design/notifications.md#public-feed), the inbox pages and counts unread from what is left. One mode: `distributed` (one process
 * per service on the real PostgreSQL and NATS). The services read the machine's clock (no
 * injectable one across processes): the old rows age for real, and RETAIN is long beside the work
 * done while the fresh rows must stay inside it, so a loaded machine does not age them past it.
 */
const real = (await availableModes()).includes("distributed");
if (!real) console.warn("[retention.test] NO REAL PostgreSQL + NATS: the retention test is SKIPPED");

const RETAIN_S = 20;
const RETAIN = `${RETAIN_S}s`;

/** Each table with its time column and what counts as prunable (a later retained row of a post's voter keeps the last vote). */
const TABLES: { table: string; column: string; where?: string; fresh: boolean }[] = [
  { table: "forum.outbox", column: "published_at", where: "published_at IS NOT NULL", fresh: true },
  { table: "notifications.processed_events", column: "processed_at", fresh: true },
  { table: "forum.idempotency_outcomes", column: "created_at", fresh: true },
  { table: "identity.join_idempotency", column: "created_at", fresh: true },
  { table: "gateway.idempotency_keys", column: "created_at", fresh: false },
  {
    table: "forum.vote_events",
    column: "cast_at",
    where:
      "EXISTS (SELECT 1 FROM forum.vote_events n WHERE n.post_id = t.post_id AND n.agent_id = t.agent_id AND n.seq > t.seq)",
    fresh: false,
  },
  { table: "notifications.feed_events", column: "recorded_at", fresh: true },
  { table: "notifications.inbox_items", column: "occurred_at", fresh: true },
  { table: "notifications.webhook_deliveries", column: "created_at", where: "status <> 'pending'", fresh: true },
  { table: "forum.flag_penalties", column: "until", fresh: false },
  { table: "translation.generation_leases", column: "expires_at", fresh: false },
];
/** Per-day counters: earlier days go, today's stay. */
const DAILY = ["forum.daily_counters", "identity.join_counters", "translation.quota_usage"];
/**
 * One marker row per service whose tables are checked, each past every retention (its job deletes
 * it on its next pass): [insert, count] with `$1` a fresh tag.
 */
const MARKERS: [string, string][] = [
  [
    "INSERT INTO forum.flag_penalties (agent_id, until) VALUES ($1, now() - interval '1 day')",
    "SELECT count(*) AS n FROM forum.flag_penalties WHERE agent_id = $1",
  ],
  [
    "INSERT INTO identity.join_counters (source, day, n) VALUES ($1, current_date - 3, 1)",
    "SELECT count(*) AS n FROM identity.join_counters WHERE source = $1",
  ],
  [
    "INSERT INTO translation.generation_leases (key, holder, expires_at) VALUES ($1, 'h', now() - interval '1 day')",
    "SELECT count(*) AS n FROM translation.generation_leases WHERE key = $1",
  ],
  [
    "INSERT INTO gateway.idempotency_keys (agent_id, key, request_hash, state, created_at, updated_at) VALUES ('ag_marker', $1, 'h', 'done', now() - interval '1 day', now() - interval '1 day')",
    "SELECT count(*) AS n FROM gateway.idempotency_keys WHERE key = $1",
  ],
  [
    "INSERT INTO notifications.processed_events (consumer, event_id, processed_at) VALUES ('retention-marker', $1, now() - interval '1 day')",
    "SELECT count(*) AS n FROM notifications.processed_events WHERE event_id = $1",
  ],
];

(real ? describe : describe.skip)("retention (distributed, every retention shortened to seconds)", () => {
  let sys: System;
  let req: HttpRequest;
  let db: pg.Client;
  let receiver: Server;
  let author: JoinedAgent;
  let voter: JoinedAgent;
  const received: string[] = [];

  beforeAll(async () => {
    receiver = createServer((r, res) => {
      let body = "";
      r.on("data", (c: Buffer) => (body += c.toString()));
      r.on("end", () => (received.push(body), res.writeHead(204).end()));
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    sys = await startSystem("distributed", {
      env: {
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
        AGENDA_MIN_SCORE: "100000",
        WEBHOOK_ALLOW_PRIVATE: "1",
        RETENTION_INTERVAL_MS: "300",
        FEED_RETENTION: RETAIN,
        RETENTION_OUTBOX: RETAIN,
        RETENTION_PROCESSED_EVENTS: RETAIN,
        RETENTION_IDEMPOTENCY: RETAIN,
        RETENTION_DAILY_COUNTERS: RETAIN,
        RETENTION_VOTE_HISTORY: RETAIN,
        RETENTION_INBOX: RETAIN,
        RETENTION_DELIVERIES: RETAIN,
        RETENTION_EXPIRED: RETAIN,
      },
    });
    req = httpClient(sys.baseUrl);
    db = new pg.Client({ connectionString: sys.env!.DATABASE_URL });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await sys?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  const count = async (sql: string, params: unknown[] = []) =>
    Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);

  /**
   * Resolves once every service's retention job has made a whole pass that began after this call:
   * twice, a marker row per service that its next pass deletes, inserted once the one before is
   * gone (the second is deleted a pass later than the first, so every rule ran in between).
   */
  async function wholePassOfEveryJob(): Promise<void> {
    for (let round = 1; round <= 2; round++) {
      const tag = `retention-marker-${randomUUID()}`;
      for (const [insert] of MARKERS) await db.query(insert, [tag]);
      await waitUntil(
        `every service's retention job to delete its marker row (round ${round})`,
        async () => {
          for (const [, select] of MARKERS) if ((await count(select, [tag])) > 0) return false;
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
    }
  }

  /** Activity touching every table: keyed join, keyed post, comments (inbox), a vote and its flip, a webhook. */
  async function activity(tag: string): Promise<{ post: string; comment: string }> {
    await joinAgent(sys, `${tag} joiner`, { idempotencyKey: randomUUID() });
    const post = (
      await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: `Retention ${tag}`, body: "Body.", is_arch_design: true },
        headers: { "idempotency-key": randomUUID() },
      })
    ).body.id as string;
    expect(post).toMatch(/^p_/); // 201
    const c = await req("POST", `/posts/${post}/comments`, { key: voter.apiKey, body: { body: `comment ${tag}` } });
    expect(c.status).toBe(201);
    expect((await req("POST", `/posts/${post}/vote`, { key: voter.apiKey, body: { vote: 1 } })).status).toBe(200);
    expect((await req("POST", `/posts/${post}/vote`, { key: voter.apiKey, body: { vote: -1 } })).status).toBe(200);
    return { post, comment: c.body.id as string };
  }

  it("deletes every table's rows past retention, keeps the ones inside it, and the API still pages", async () => {
    author = await joinAgent(sys, "author");
    voter = await joinAgent(sys, "voter");
    const hook = await req("POST", "/me/webhooks", {
      key: author.apiKey,
      body: { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`, events: ["*"] },
    });
    expect(hook.status).toBe(201);

    // Old activity, and rows no API call makes on demand (earlier days' counters, expired leases).
    const old = await activity("old");
    await db.query(
      `INSERT INTO forum.daily_counters (agent_id, what, day, n) VALUES ($1, 'post', current_date - 3, 1)`,
      [author.agentId],
    );
    await db.query(`INSERT INTO identity.join_counters (source, day, n) VALUES ('old-source', current_date - 3, 1)`);
    await db.query(`INSERT INTO translation.quota_usage (agent_id, day, used) VALUES ('ag_old', current_date - 3, 1)`);
    await db.query(`INSERT INTO forum.flag_penalties (agent_id, until) VALUES ('ag_old', now())`);
    await db.query(`INSERT INTO translation.generation_leases (key, holder, expires_at) VALUES ('old', 'h', now())`);
    await db.query(
      `INSERT INTO gateway.idempotency_keys (agent_id, key, request_hash, state, created_at, updated_at) VALUES ('ag_old', 'k', 'h', 'done', now(), now())`,
    );
    let oldCursor = "";
    await eventually(async () => {
      const feed = await req("GET", `/events?types=comment.created&limit=100`);
      const mine = (feed.body.items as { cursor: string; data: { postId?: string } }[]).find(
        (e) => e.data.postId === old.post,
      );
      expect(mine).toBeDefined();
      expect(received.some((b) => b.includes(old.comment))).toBe(true);
      oldCursor = mine!.cursor;
    }, 15_000);
    // every table holds old rows now
    for (const t of TABLES)
      expect([
        t.table,
        await count(`SELECT count(*) AS n FROM ${t.table} t${t.where ? ` WHERE ${t.where}` : ""}`),
      ]).not.toEqual([t.table, 0]);
    const inboxBefore = await req("GET", "/me/notifications?limit=100", { key: author.apiKey });
    const oldEnd = new Date();
    expect(inboxBefore.body.items.length).toBeGreaterThan(0);

    // Past retention: the job (every 300 ms) deletes them all once they are older than RETAIN.
    await eventually(
      async () => {
        for (const t of TABLES)
          expect([
            t.table,
            await count(
              `SELECT count(*) AS n FROM ${t.table} t WHERE ${t.column} < $1::timestamptz${t.where ? ` AND ${t.where}` : ""}`,
              [oldEnd],
            ),
          ]).toEqual([t.table, 0]);
        for (const d of DAILY)
          expect([d, await count(`SELECT count(*) AS n FROM ${d} WHERE day < current_date`)]).toEqual([d, 0]);
      },
      RETAIN_S * 1_000 + 30_000,
      250,
    );

    // Inside retention: the fresh activity's rows (once they are all written) stay through whole
    // passes of every job, today's counters stay, and the last vote of the old post (no newer vote
    // of that voter on it) is kept whatever its age.
    const freshAt = Date.now();
    const fresh = await activity("fresh");
    const freshRows = async () => {
      for (const t of TABLES.filter((x) => x.fresh))
        expect([
          t.table,
          await count(`SELECT count(*) AS n FROM ${t.table} WHERE ${t.column} >= $1::timestamptz`, [oldEnd]),
        ]).not.toEqual([t.table, 0]);
      expect(received.some((b) => b.includes(fresh.comment))).toBe(true);
    };
    await eventually(freshRows, 15_000);
    await wholePassOfEveryJob();
    await freshRows();
    console.log(
      `[retention] fresh rows written and kept through whole passes of every job in ${Date.now() - freshAt} ms (RETAIN ${RETAIN_S} s)`,
    );
    expect(await count(`SELECT count(*) AS n FROM forum.vote_events WHERE post_id = $1`, [old.post])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM forum.daily_counters WHERE day = current_date`)).toBeGreaterThan(0);
    expect(await count(`SELECT count(*) AS n FROM identity.join_counters WHERE day = current_date`)).toBeGreaterThan(0);

    // The API still pages: an old feed cursor resumes after the pruned events; the inbox lists
    // what is left and counts as unread only items that are still there.
    const after = await req("GET", `/events?after=${oldCursor}&limit=100`);
    expect(after.status).toBe(200);
    expect((after.body.items as { data: { postId?: string } }[]).some((e) => e.data.postId === fresh.post)).toBe(true);
    expect((after.body.items as { data: { postId?: string } }[]).some((e) => e.data.postId === old.post)).toBe(false);
    const beyond = await req("GET", `/events?after=${BigInt(after.body.nextCursor as string) + 1000n}`);
    expect(beyond.status).toBe(400);
    const inbox = await req("GET", "/me/notifications?limit=100", { key: author.apiKey });
    expect(inbox.status).toBe(200);
    const postsIn = (inbox.body.items as { postId: string }[]).map((i) => i.postId);
    expect(postsIn).toContain(fresh.post);
    expect(postsIn).not.toContain(old.post);
    expect(inbox.body.unread).toBe(inbox.body.items.length);
    const page2 = await req("GET", `/me/notifications?after=${inboxBefore.body.items[0].cursor}&limit=1`, {
      key: author.apiKey,
    });
    expect(page2.status).toBe(200);
  }, 180_000);
});
