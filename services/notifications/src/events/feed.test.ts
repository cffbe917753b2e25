import { fileURLToPath } from "node:url";
import { events } from "@aps/proto";
import {
  createLogger,
  InProcessBus,
  JetStreamBus,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  subjectOf,
  type BusEvent,
  type Database,
  type EventBus,
} from "@aps/platform";
import {
  createTestDatabase,
  hasNats,
  hasPostgres,
  TEST_NATS_URL,
  uniqueBusNames,
  waitUntil,
  type TestDatabase,
} from "@aps/testkit";
import { consumeFeed, FEED_CONSUMER } from "./feed.js";

/**
 * The feed consumer on the real PostgreSQL (docs/design/votes-and-heat.md#what-a-vote-costs): a vote that crosses no milestone
 * records its voter's participation with one idempotent INSERT — no transaction and no
 * processed_events row — and a replay of it changes nothing; a vote that crosses a milestone
 * still stores its `vote.milestone` exactly once, in the processed-once transaction. On JetStream,
 * votes are handled VOTE_CONCURRENCY at a time and their participations written in group commits
 * (docs/design/events.md#consumers).
 */
/**
 * A `forum.vote_cast` of a +1 by `voterId` on `postId` that leaves it `votesFor` votes for;
 * `postAuthorId` as the forum names the post's author ("" unknown).
 */
function voteCast(
  bus: EventBus,
  eventId: string,
  postId: string,
  voterId: string,
  votesFor: number,
  postAuthorId = "",
): BusEvent {
  return {
    subject: subjectOf(bus, "forum.vote_cast"),
    eventId,
    payload: events.VoteCast.encode(
      events.VoteCast.fromPartial({
        eventId,
        postId,
        voterId,
        vote: 1,
        previousVote: 0,
        votesFor,
        votesAgainst: 0,
        postAuthorId,
        occurredAt: new Date().toISOString(),
      }),
    ).finish(),
    headers: {},
  };
}

const log = createLogger("notifications-feed-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("../store/migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! notifications feed.test.ts: NO POSTGRESQL — the suite is SKIPPED");

(pgUp ? describe : describe.skip)("the feed consumer's votes (real PostgreSQL; SKIPPED without one)", () => {
  let tdb: TestDatabase;
  let db: Database;
  // dedupe window 0: publishing an eventId again is a replay, as a redelivery would be
  const bus = new InProcessBus(log, "aps_feedtest", 0);
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 4, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    // the post's author is known only after its own event: past AUTHOR_WAIT_MS nothing waits for it
    await consumeFeed(
      bus,
      db.pool,
      () => undefined,
      log,
      () => Date.now() + 3_600_000,
    );
  });
  afterAll(async () => {
    await bus.close();
    await db?.close();
    await tdb?.drop();
  });

  const vote = (eventId: string, voterId: string, votesFor: number) =>
    bus.publish(voteCast(bus, eventId, "p_1", voterId, votesFor));
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await db.pool.query<{ n: string }>(sql, params)).rows[0]!.n);
  const processed = (eventId: string) =>
    count("SELECT count(*) AS n FROM processed_events WHERE consumer = $1 AND event_id = $2", [FEED_CONSUMER, eventId]);
  const participants = () => count("SELECT count(*) AS n FROM participation WHERE post_id = 'p_1' AND role = 'voter'");

  it("records a vote below every milestone as participation only, without a processed_events row, replays included", async () => {
    await vote("ev_v1", "ext_a", 1); // score 0 → 1: no milestone
    expect(await participants()).toBe(1);
    expect(await processed("ev_v1")).toBe(0);
    await vote("ev_v1", "ext_a", 1); // replayed
    await vote("ev_v2", "ext_b", 2);
    expect(await participants()).toBe(2);
    expect(await processed("ev_v2")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM feed_events")).toBe(0);
  });

  it("stores a crossed milestone once, with its participation, in the processed-once transaction", async () => {
    await vote("ev_v5", "ext_c", 5); // score 4 → 5: milestone 5
    await vote("ev_v5", "ext_c", 5); // replayed
    expect(await processed("ev_v5")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM feed_events WHERE type = 'vote.milestone'")).toBe(1);
    expect(await participants()).toBe(3);
  });
});

(pgUp ? describe : describe.skip)(
  "a milestone that overtakes its post's own event (real PostgreSQL; SKIPPED without one)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    const bus = new InProcessBus(log, "aps_feedorder", 0);
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 4, log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      // the real clock: an event whose post's author is unknown would wait for the post's event
      await consumeFeed(bus, db.pool, () => undefined, log);
    });
    afterAll(async () => {
      await bus.close();
      await db?.close();
      await tdb?.drop();
    });

    it("reaches the post's author at once: the vote names the author, so nothing waits for forum.post_created", async () => {
      // no forum.post_created of p_2 ever arrives; score 4 → 5 crosses milestone 5
      await bus.publish(voteCast(bus, "ev_m5", "p_2", "ext_voter", 5, "ext_author"));
      const item = await waitUntil(
        "the author's inbox item of the milestone",
        async () =>
          (
            await db.pool.query<{ type: string; post_id: string }>(
              "SELECT type, post_id FROM inbox_items WHERE agent_id = 'ext_author'",
            )
          ).rows[0],
        // below AUTHOR_WAIT_MS (60 s), after which the event would be stored without the author's item
        { timeoutMs: 20_000 },
      );
      expect(item).toEqual({ type: "vote.milestone", post_id: "p_2" });
    });
  },
);

const natsUp = await hasNats();
if (!natsUp) console.warn("!! notifications feed.test.ts: NO NATS — the JetStream group-commit case is SKIPPED");

(pgUp && natsUp ? describe : describe.skip)(
  "the feed consumer's votes handled at once (real PostgreSQL and JetStream; SKIPPED without them)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let bus: JetStreamBus;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 4, log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      bus = await JetStreamBus.connect({
        servers: TEST_NATS_URL,
        ...uniqueBusNames(),
        connectionName: "feed-test",
        log,
      });
      await consumeFeed(bus, db.pool, () => undefined, log);
    });
    afterAll(async () => {
      await bus?.deleteStream().catch(() => undefined);
      await bus?.close();
      await db?.close();
      await tdb?.drop();
    });

    it("200 votes below every milestone: each voter's participation once, in far fewer commits than votes (docs/design/events.md#consumers)", async () => {
      const sent: Promise<void>[] = [];
      for (let i = 0; i < 200; i++) {
        const eventId = `ev_at_once_${i}`;
        // 100 voters, each on both posts
        sent.push(bus.publish(voteCast(bus, eventId, `p_${Math.floor(i / 100)}`, `ext_${i % 100}`, 1)));
      }
      await Promise.all(sent);
      const rows = () =>
        db.pool
          .query<{ n: string }>("SELECT count(*) AS n FROM participation WHERE role = 'voter'")
          .then((r) => Number(r.rows[0]!.n));
      await waitUntil("the 200 participations", async () => (await rows()) >= 200, {
        timeoutMs: 20_000,
        intervalMs: 100,
      });
      expect(await rows()).toBe(200);
      // one INSERT (an implicit commit) per vote before: 200; in group commits far fewer. Each row
      // carries the transaction that wrote it (xmin): counted exactly, and only the consumer's
      // (pg_stat_database's commits are flushed up to a second late and count every query)
      const commits = await db.pool.query<{ n: string }>(
        "SELECT count(DISTINCT xmin::text) AS n FROM participation WHERE role = 'voter'",
      );
      expect(Number(commits.rows[0]!.n)).toBeLessThan(100);
      // and no processed-once transaction of their own either
      const processed = await db.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM processed_events WHERE event_id LIKE 'ev_at_once_%'",
      );
      expect(Number(processed.rows[0]!.n)).toBe(0);
    });
  },
);
