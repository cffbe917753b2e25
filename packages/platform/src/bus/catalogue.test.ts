import { events } from "@aps/proto";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { createLogger } from "../log.js";
import { openDatabase, withTransaction, type Database } from "../db/database.js";
import { migrate } from "../db/migrate.js";
import { PLATFORM_MIGRATIONS_DIR } from "../db/paths.js";
import { consumeEvents, EVENT_TYPES, EventOutbox, eventTypeOf, subjectOf, type EventType } from "./catalogue.js";
import { InProcessBus } from "./memory.js";
import type { BusEvent } from "./types.js";

/**
 * The event catalogue (docs/design/events.md#catalogue): it names every event message of the protos once; typed
 * consumers subscribe to exactly the types they handle and get decoded messages; the typed
 * producer writes outbox rows that decode to what it was given and wakes the relay only after a
 * commit (on the real PostgreSQL).
 */
const log = createLogger("catalogue-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! catalogue.test.ts: NO POSTGRESQL — the EventOutbox suite is SKIPPED");

describe("the event catalogue", () => {
  it("names every event message exactly once, under <service>.<snake_case name>", () => {
    // every message of `events` (a value with encode/decode/fromPartial)
    const messages = Object.entries(events).filter(
      ([, v]) => typeof v === "object" && v !== null && "encode" in v && "decode" in v && "fromPartial" in v,
    );
    expect(messages.length).toBeGreaterThan(0);
    const inCatalogue = Object.values(EVENT_TYPES) as unknown[];
    for (const [name, codec] of messages) {
      expect([name, inCatalogue.filter((c) => c === codec).length]).toEqual([name, 1]);
    }
    expect(inCatalogue.length).toBe(messages.length);
    for (const [type, codec] of Object.entries(EVENT_TYPES)) {
      const name = messages.find(([, c]) => c === codec)![0];
      const snake = name.replace(/[A-Z]/g, (ch, i: number) => (i === 0 ? "" : "_") + ch.toLowerCase());
      expect(type).toMatch(new RegExp(`^(identity|forum|council|knowledge)\\.${snake}$`));
    }
  });

  it("maps full subjects back to types, and nothing else", () => {
    const bus = { prefix: "aps_t1" };
    expect(eventTypeOf(bus, subjectOf(bus, "forum.vote_cast"))).toBe("forum.vote_cast");
    expect(eventTypeOf(bus, "aps_t1.forum.nope")).toBeUndefined();
    expect(eventTypeOf(bus, "other.forum.vote_cast")).toBeUndefined();
  });

  it("consumeEvents subscribes to the handled types only and hands each handler its decoded message", async () => {
    const bus = new InProcessBus(log, "aps_cat");
    const seen: string[] = [];
    const sub = await consumeEvents(bus, {
      durable: "catalogue-test",
      handlers: {
        "forum.vote_cast": async (m) => void seen.push(`vote ${m.postId} ${m.vote} ${m.votesFor}`),
        "council.case_closed": async (m) => void seen.push(`closed ${m.postId} ${m.outcome}`),
      },
    });
    const publish = (type: EventType, payload: Uint8Array, eventId: string): Promise<void> =>
      bus.publish({ subject: subjectOf(bus, type), eventId, payload, headers: {} } satisfies BusEvent);
    await publish(
      "forum.vote_cast",
      events.VoteCast.encode(events.VoteCast.fromPartial({ postId: "p_1", vote: -1, votesFor: 4 })).finish(),
      "e1",
    );
    await publish(
      "forum.comment_created",
      events.CommentCreated.encode(events.CommentCreated.fromPartial({ postId: "p_1" })).finish(),
      "e2",
    );
    await publish(
      "council.case_closed",
      events.CaseClosed.encode(events.CaseClosed.fromPartial({ postId: "p_2", outcome: "adopted" })).finish(),
      "e3",
    );
    await sub.stop();
    await bus.close();
    expect(seen).toEqual(["vote p_1 -1 4", "closed p_2 adopted"]);
  });
});

(pgUp ? describe : describe.skip)(
  "EventOutbox on the real PostgreSQL (SKIPPED when no PostgreSQL is reachable)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "catalogue_test", log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR], log);
    });
    afterAll(async () => {
      await db?.close();
      await tdb?.drop();
    });

    it("writes an outbox row whose payload decodes to the given fields, and wakes after the commit only", async () => {
      let wakes = 0;
      const outbox = new EventOutbox(() => wakes++);
      let wakesInside = -1;
      const eventId = await withTransaction(db.pool, async (tx) => {
        const id = await outbox.publish(tx, "council.ballot_cast", {
          postId: "p_9",
          councillorId: "a_1",
          vote: "approve",
          approvals: 2,
          rejections: 1,
          abstentions: 0,
          recusals: 0,
          sealing: "until_closed",
          authorId: "a_0",
          previousVote: "",
          reason: "",
        });
        await outbox.publish(tx, "identity.key_rotated", { agentId: "a_1", occurredAt: "2026-01-01T00:00:00.000Z" });
        wakesInside = wakes;
        return id;
      });
      expect(wakesInside).toBe(0);
      expect(wakes).toBe(1); // one wake per commit, however many events it wrote
      const rows = await db.pool.query<{
        event_id: string;
        subject: string;
        payload: Buffer;
        headers: Record<string, string>;
      }>("SELECT event_id, subject, payload, headers FROM outbox ORDER BY seq");
      expect(rows.rows.map((r) => r.subject)).toEqual(["council.ballot_cast", "identity.key_rotated"]);
      const ballot = events.BallotCast.decode(rows.rows[0]!.payload);
      expect(ballot).toMatchObject({
        eventId,
        postId: "p_9",
        councillorId: "a_1",
        vote: "approve",
        approvals: 2,
        rejections: 1,
      });
      expect(rows.rows[0]!.event_id).toBe(eventId);
      expect(Math.abs(Date.parse(ballot.occurredAt) - Date.now())).toBeLessThan(60_000);
      expect(rows.rows[0]!.headers["aps-event-type"]).toBe("council.ballot_cast");
      expect(events.KeyRotated.decode(rows.rows[1]!.payload).occurredAt).toBe("2026-01-01T00:00:00.000Z");
    });

    it("writes nothing and never wakes when the transaction rolls back", async () => {
      let wakes = 0;
      const outbox = new EventOutbox(() => wakes++);
      const before = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM outbox");
      await expect(
        withTransaction(db.pool, async (tx) => {
          await outbox.publish(tx, "forum.post_created", {
            postId: "p_x",
            authorId: "a",
            title: "t",
            isArchDesign: true,
            status: "open",
          });
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      // the next transaction on the (reused) client must not inherit the dropped hook
      await withTransaction(db.pool, async (tx) => void (await tx.query("SELECT 1")));
      const after = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM outbox");
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
      expect(wakes).toBe(0);
    });
  },
);
