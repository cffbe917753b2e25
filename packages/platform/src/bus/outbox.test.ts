import pg from "pg";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, waitUntil, type TestDatabase } from "@aps/testkit";
import { createLogger } from "../log.js";
import { openDatabase, withTransaction, type Database } from "../db/database.js";
import { migrate } from "../db/migrate.js";
import { PLATFORM_MIGRATIONS_DIR } from "../db/paths.js";
import { headers as natsHeaders } from "nats";
import { events } from "@aps/proto";
import { enqueueEvent, OutboxRelay, TYPED_ROW_GUARD, typedOutboxEvent } from "./outbox.js";
import { encodeEvent } from "./catalogue.js";
import { processOnce } from "./consumer.js";
import type { BusEvent, EventBus, Subscription } from "./types.js";

/**
 * The transactional outbox and the idempotent consumer (docs/design/events.md#path-of-an-event), on the real PostgreSQL
 * (a fresh database): events exist if and only if their transaction
 * commits, the relay publishes them in order exactly once and survives a failing bus, and
 * processOnce applies an effect once per eventId even under concurrent redelivery.
 */
const log = createLogger("outbox-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) {
  console.warn(
    `\n\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n` +
      `!! outbox.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n` +
      `!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
  );
}

interface Backend {
  name: string;
  open(): Promise<{ db: Database; url?: string; cleanup(): Promise<void> }>;
}

const postgres: Backend = {
  name: "real PostgreSQL",
  open: async () => {
    const tdb: TestDatabase = await createTestDatabase();
    const db = await openDatabase({ url: tdb.url, schema: "outbox_test", log });
    return {
      db,
      url: tdb.url,
      cleanup: async () => {
        await db.close();
        await tdb.drop();
      },
    };
  },
};

// The embedded database of the all-in-one is the same PostgreSQL (docs/design/services.md#embedded-postgresql): one backend.
const backends = [postgres];

/** A bus that records what it was asked to publish, and when; its first `failFirst` publishes reject. */
class RecordingBus implements EventBus {
  readonly prefix = "aps";
  readonly published: BusEvent[] = [];
  /** Date.now() of each publish call. */
  readonly callAt: number[] = [];
  calls = 0;
  constructor(private failFirst = 0) {}
  async publish(event: BusEvent): Promise<void> {
    this.calls++;
    this.callAt.push(Date.now());
    if (this.calls <= this.failFirst) throw new Error(`bus unavailable (call ${this.calls})`);
    this.published.push(event);
  }
  async consume(): Promise<Subscription> {
    throw new Error("not used");
  }
  async subscribe(): Promise<Subscription> {
    throw new Error("not used");
  }
  async close(): Promise<void> {}
}

/**
 * A bus that, like JetStream and the in-process bus, keeps the order of concurrent publishes
 * (`ordersConcurrentPublishes`) and drops a repeated eventId. The publishes started in one
 * event-loop turn settle after it, in a random order, so they complete out of order; the calls
 * numbered in `failCalls` reject.
 */
class PipelineBus implements EventBus {
  readonly prefix = "aps";
  readonly ordersConcurrentPublishes = true;
  /** Events the bus took, first copy of each eventId, in the order the publishes were started. */
  readonly stored: BusEvent[] = [];
  calls = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** Publishes started in this event-loop turn, not yet settled. */
  private unsettled: (() => void)[] = [];
  constructor(private readonly failCalls: number[] = []) {}
  async publish(event: BusEvent): Promise<void> {
    const call = ++this.calls;
    const fail = this.failCalls.includes(call);
    if (!fail && !this.stored.some((e) => e.eventId === event.eventId)) this.stored.push(event);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise<void>((settle) => this.settleAfterThisTurn(settle));
    this.inFlight--;
    if (fail) throw new Error(`bus unavailable (call ${call})`);
  }
  /** Queues `settle`; once the current event-loop turn is over, settles every queued publish in a random order. */
  private settleAfterThisTurn(settle: () => void): void {
    this.unsettled.push(settle);
    if (this.unsettled.length > 1) return;
    setImmediate(() => {
      const all = this.unsettled;
      this.unsettled = [];
      for (let i = all.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [all[i], all[j]] = [all[j]!, all[i]!];
      }
      for (const s of all) s();
    });
  }
  async consume(): Promise<Subscription> {
    throw new Error("not used");
  }
  async subscribe(): Promise<Subscription> {
    throw new Error("not used");
  }
  async close(): Promise<void> {}
}

/** Looks at `cond` every 25 ms until it holds; throws after `ms` (× TEST_TIME_SCALE). */
async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  await waitUntil(what, cond, { timeoutMs: ms, intervalMs: 25 });
}

/**
 * `pool` with a record of the relay's queries: `passes()` counts the passes begun (each begins
 * with its one SELECT of unpublished rows; pass n has ended once pass n + 1 began), `passEnded()`
 * tells whether a pass's SELECT has answered, `endOf(sql)` when the first query starting with
 * `sql` answered (Date.now()).
 */
function watched(pool: pg.Pool) {
  const queries: { sql: string; endedAt?: number }[] = [];
  const query = (...args: unknown[]) => {
    const q: { sql: string; endedAt?: number } = { sql: typeof args[0] === "string" ? args[0] : "" };
    queries.push(q);
    const answer = (pool.query as (...a: unknown[]) => Promise<unknown>).apply(pool, args);
    void answer.then(
      () => (q.endedAt = Date.now()),
      () => (q.endedAt = Date.now()),
    );
    return answer;
  };
  const isPass = (q: { sql: string }) => q.sql.startsWith("SELECT seq");
  return {
    pool: new Proxy(pool, {
      get: (target, prop) => (prop === "query" ? query : (Reflect.get(target, prop, target) as unknown)),
    }),
    passes: () => queries.filter(isPass).length,
    passEnded: () => queries.some((q) => isPass(q) && q.endedAt !== undefined),
    /** True when the last pass begun has ended. */
    lastPassEnded: () => queries.filter(isPass).at(-1)?.endedAt !== undefined,
    endOf: (sql: string) => queries.find((q) => q.sql.startsWith(sql) && q.endedAt !== undefined)?.endedAt,
  };
}

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

(pgUp ? describe.each(backends) : describe.skip.each(backends))(
  "transactional outbox on $name (SKIPPED when no PostgreSQL is reachable)",
  (backend) => {
    let db: Database;
    let url: string | undefined;
    let cleanup: () => Promise<void>;
    const relays: OutboxRelay[] = [];

    beforeAll(async () => {
      ({ db, url, cleanup } = await backend.open());
      await migrate(db, PLATFORM_MIGRATIONS_DIR, log);
      // Running the migrations again is a no-op (every start runs them).
      await migrate(db, PLATFORM_MIGRATIONS_DIR, log);
      await db.pool.query(
        "CREATE TABLE effects (consumer text NOT NULL, event_id text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())",
      );
    });
    afterAll(async () => {
      await cleanup?.();
    });
    beforeEach(async () => {
      await db.pool.query("DELETE FROM outbox");
      await db.pool.query("DELETE FROM processed_events");
      await db.pool.query("DELETE FROM effects");
    });
    afterEach(async () => {
      for (const r of relays.splice(0)) await r.stop();
    });

    function relay(
      bus: EventBus,
      opts: ConstructorParameters<typeof OutboxRelay>[3] = {},
      pool: pg.Pool = db.pool,
    ): OutboxRelay {
      const r = new OutboxRelay(pool, bus, log, { pollMs: 20, ...opts });
      relays.push(r);
      return r;
    }

    it("lives in the service's own schema", async () => {
      const r = await db.pool.query<{ table_schema: string; table_name: string }>(
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_name IN ('outbox', 'processed_events') ORDER BY table_name",
      );
      expect(r.rows).toEqual([
        { table_schema: "outbox_test", table_name: "outbox" },
        { table_schema: "outbox_test", table_name: "processed_events" },
      ]);
    });

    /** Writes `event` (typedOutboxEvent's JSON) as SQL of a service's own does, with `extra` fields. */
    const writeTyped = (event: string, extra: Record<string, unknown> = {}) =>
      db.pool.query(
        `INSERT INTO outbox (event_id, subject, fields, headers)
         SELECT e #>> '{fields,eventId}', e ->> 'type', (e -> 'fields') || $2::jsonb, e -> 'headers' FROM (SELECT $1::jsonb AS e) x`,
        [event, JSON.stringify(extra)],
      );

    it("encodes a typed row's fields with the catalogue: the bytes the generated encoder writes, without the guard header (docs/design/events.md#outbox)", async () => {
      const bus = new RecordingBus();
      const fields = {
        eventId: "01HZTYPED0000000000000000A",
        occurredAt: "2026-11-26T20:00:00.000Z",
        postId: "p_1",
        voterId: "ag_ü✓",
        vote: -1,
      };
      await writeTyped(typedOutboxEvent("forum.vote_cast", fields), { previousVote: 1, votesFor: 0, votesAgainst: 7 });
      // a row of a TypeScript producer beside it keeps its encoded payload
      await withTransaction(db.pool, (tx) =>
        enqueueEvent(tx, { subject: "forum.post_created", payload: bytes("enc") }),
      );
      await relay(bus).drain();
      expect(bus.published.map((e) => e.subject)).toEqual(["aps.forum.vote_cast", "aps.forum.post_created"]);
      const sent = bus.published[0]!;
      const want = encodeEvent("forum.vote_cast", {
        ...fields,
        previousVote: 1,
        votesFor: 0,
        votesAgainst: 7,
        postAuthorId: "",
      });
      expect(Buffer.from(sent.payload).toString("hex")).toBe(Buffer.from(want.payload).toString("hex"));
      expect(events.VoteCast.decode(sent.payload)).toMatchObject({ voterId: "ag_ü✓", vote: -1, votesAgainst: 7 });
      expect(sent.eventId).toBe(fields.eventId);
      expect(sent.headers["aps-event-type"]).toBe("forum.vote_cast");
      expect(Object.keys(sent.headers)).not.toContain(TYPED_ROW_GUARD.name);
      expect(text(bus.published[1]!.payload)).toBe("enc");
    });

    it("keeps a typed row whose field the catalogue's message lacks unpublished, saying which (docs/design/events.md#outbox)", async () => {
      const bus = new RecordingBus();
      await writeTyped(typedOutboxEvent("forum.vote_cast", { eventId: "01HZTYPED0000000000000000B", postId: "p_2" }), {
        votesFr: 3,
      });
      const r = relay(bus);
      await expect(r.drain()).rejects.toThrow("forum.vote_cast has no field votesFr");
      expect(bus.published).toEqual([]);
      const row = await db.pool.query("SELECT published_at, attempts FROM outbox");
      expect(row.rows).toEqual([{ published_at: null, attempts: 1 }]);
    });

    it("a row has a payload or typed fields, never both or neither", async () => {
      await expect(
        db.pool.query(
          "INSERT INTO outbox (event_id, subject, payload, fields) VALUES ('x1', 'forum.vote_cast', '\\x00', '{}')",
        ),
      ).rejects.toThrow(/outbox_payload_or_fields/);
      await expect(
        db.pool.query("INSERT INTO outbox (event_id, subject) VALUES ('x2', 'forum.vote_cast')"),
      ).rejects.toThrow(/outbox_payload_or_fields/);
    });

    it("never publishes events enqueued in a rolled-back transaction", async () => {
      const bus = new RecordingBus();
      await expect(
        withTransaction(db.pool, async (tx) => {
          await enqueueEvent(tx, { subject: "forum.post_created", payload: bytes("doomed 1") });
          await enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes("doomed 2") });
          throw new Error("state change failed");
        }),
      ).rejects.toThrow("state change failed");
      const kept = await withTransaction(db.pool, (tx) =>
        enqueueEvent(tx, { subject: "forum.post_created", payload: bytes("kept") }),
      );
      await expect(
        withTransaction(db.pool, async (tx) => {
          await enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes("doomed 3") });
          // A constraint violation later in the same transaction also takes the event with it.
          await tx.query("INSERT INTO processed_events (consumer, event_id) VALUES ('x', 'dup'), ('x', 'dup')");
        }),
      ).rejects.toThrow();

      const w = watched(db.pool);
      const r = relay(bus, {}, w.pool);
      await r.drain();
      expect(bus.published.map((e) => text(e.payload))).toEqual(["kept"]);
      expect(bus.published[0]!.eventId).toBe(kept);
      expect(Number((await db.pool.query("SELECT count(*) AS n FROM outbox")).rows[0].n)).toBe(1);
      // Later passes find nothing more either: two of them, begun by the start and the poll, run to their end.
      const drained = w.passes();
      r.start();
      await waitFor("two passes of the running relay", () => w.passes() >= drained + 2);
      await r.stop();
      expect(bus.published).toHaveLength(1);
    });

    it("publishes committed events in seq order exactly once, with prefix and headers, and marks them published", async () => {
      const bus = new RecordingBus();
      const expected: { id: string; subject: string; payload: string }[] = [];
      // Seven transactions of one to three events each, committed one after another.
      for (let t = 0; t < 7; t++) {
        await withTransaction(db.pool, async (tx) => {
          for (let i = 0; i <= t % 3; i++) {
            const subject = i % 2 ? "forum.vote_cast" : "identity.agent_joined";
            const payload = `tx${t} ev${i}`;
            const id = await enqueueEvent(tx, {
              subject,
              payload: bytes(payload),
              headers: { traceparent: `00-${"a".repeat(31)}${t}-${"b".repeat(15)}${i}-01` },
            });
            expected.push({ id, subject, payload });
          }
        });
      }
      const explicit = "01HZZZZZZZZZZZZZZZZZZZZZZZ";
      await withTransaction(db.pool, (tx) =>
        enqueueEvent(tx, {
          subject: "council.case_closed",
          payload: new Uint8Array([0, 255, 1, 254]),
          eventId: explicit,
        }),
      );
      expect(new Set(expected.map((e) => e.id)).size).toBe(expected.length);
      expect(await relay(bus).backlog()).toBe(expected.length + 1);

      const w = watched(db.pool);
      const r = relay(bus, { batchSize: 4 }, w.pool);
      r.start();
      await waitFor("an empty backlog", async () => (await r.backlog()) === 0);
      // Two passes of the poller begun after it, run to their end, to (wrongly) publish anything again.
      const emptied = w.passes();
      await waitFor("two passes after the backlog emptied", () => w.passes() >= emptied + 2);
      await r.stop();

      expect(bus.published.map((e) => e.eventId)).toEqual([...expected.map((e) => e.id), explicit]);
      expect(bus.published.slice(0, -1).map((e) => e.subject)).toEqual(expected.map((e) => `aps.${e.subject}`));
      expect(bus.published.slice(0, -1).map((e) => text(e.payload))).toEqual(expected.map((e) => e.payload));
      const last = bus.published.at(-1)!;
      expect(last.subject).toBe("aps.council.case_closed");
      expect([...last.payload]).toEqual([0, 255, 1, 254]);
      expect(bus.published[0]!.headers).toEqual({
        "aps-event-type": "identity.agent_joined",
        traceparent: `00-${"a".repeat(31)}0-${"b".repeat(15)}0-01`,
      });
      expect(last.headers).toEqual({ "aps-event-type": "council.case_closed" });

      const rows = await db.pool.query<{ event_id: string; published_at: Date | null; attempts: number }>(
        "SELECT event_id, published_at, attempts FROM outbox ORDER BY seq",
      );
      expect(rows.rows.map((x) => x.event_id)).toEqual(bus.published.map((e) => e.eventId));
      for (const row of rows.rows) {
        expect(row.published_at).toBeInstanceOf(Date);
        expect(row.attempts).toBe(0);
      }
    });

    it("publishes events committed while the relay runs, woken by notify()", async () => {
      const bus = new RecordingBus();
      const w = watched(db.pool);
      const r = relay(bus, { pollMs: 60_000 }, w.pool);
      r.start();
      // the start's pass has looked (and found nothing): what follows is woken by notify() alone
      await waitFor("the start's pass", () => w.passEnded());
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          await withTransaction(db.pool, (tx) =>
            enqueueEvent(tx, { subject: "forum.comment_added", payload: bytes(`c${i}`) }),
          ),
        );
        r.notify();
      }
      await waitFor("five publishes", () => bus.published.length >= 5, 5_000);
      await waitFor("an empty backlog", async () => (await r.backlog()) === 0);
      // one more pass, woken once everything was marked, run to its end: nothing is published again
      const emptied = w.passes();
      r.notify();
      await waitFor("a pass after the backlog emptied", () => w.passes() > emptied);
      await r.stop();
      expect(bus.published.map((e) => e.eventId)).toEqual(ids);
    });

    it("relays a burst smaller than a batch with one pass, and follows a full pass with another (docs/design/events.md#relay)", async () => {
      const bus = new RecordingBus();
      const w = watched(db.pool);
      const enqueue = (n: number) =>
        withTransaction(db.pool, async (tx) => {
          for (let i = 0; i < n; i++)
            await enqueueEvent(tx, { subject: "forum.comment_added", payload: bytes(`b${i}`) });
        });
      /** Passes of a started relay's burst of `n` rows after one wake, counted once it stopped (a stop awaits the loop in flight). */
      const passesOfBurst = async (n: number) => {
        const r = relay(bus, { pollMs: 60_000, batchSize: 3 }, w.pool);
        const started = w.passes();
        r.start();
        await waitFor("the start's pass", () => w.passes() > started && w.lastPassEnded());
        const before = w.passes();
        const published = bus.published.length;
        await enqueue(n);
        r.notify();
        await waitFor(`${n} publishes`, () => bus.published.length === published + n, 5_000);
        await waitFor("an empty backlog", async () => (await r.backlog()) === 0);
        await r.stop();
        return w.passes() - before;
      };
      // two rows, one wake: one pass, no empty pass after it
      expect(await passesOfBurst(2)).toBe(1);
      // seven rows, one wake: full, full, then the last row's pass (3 + 3 + 1)
      expect(await passesOfBurst(7)).toBe(3);
    });

    it("loses nothing and retries until everything is published when the bus rejects (failing bus stub)", async () => {
      const bus = new RecordingBus(3);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          await withTransaction(db.pool, (tx) =>
            enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes(`v${i}`) }),
          ),
        );

      const w = watched(db.pool);
      const r = relay(bus, {}, w.pool);
      // A single pass surfaces the failure and keeps the row.
      await expect(r.drain()).rejects.toThrow(/bus unavailable/);
      expect(await r.backlog()).toBe(5);

      r.start();
      await waitFor("an empty backlog", async () => (await r.backlog()) === 0);
      // two passes begun after it, run to their end, to (wrongly) publish anything again
      const emptied = w.passes();
      await waitFor("two passes after the backlog emptied", () => w.passes() >= emptied + 2);
      await r.stop();
      expect(bus.calls).toBeGreaterThanOrEqual(3 + 5);
      // Every event published exactly once, in order, although the first one failed three times.
      expect(bus.published.map((e) => e.eventId)).toEqual(ids);
      expect(bus.published.map((e) => text(e.payload))).toEqual(["v0", "v1", "v2", "v3", "v4"]);
      const rows = await db.pool.query<{ attempts: number; published_at: Date | null }>(
        "SELECT attempts, published_at FROM outbox ORDER BY seq",
      );
      expect(rows.rows.map((x) => x.attempts)).toEqual([3, 0, 0, 0, 0]);
      expect(rows.rows.every((x) => x.published_at instanceof Date)).toBe(true);
    });

    it("keeps publishing after a failure in the middle of a batch, without republishing the earlier rows", async () => {
      let calls = 0;
      const bus = new RecordingBus();
      const flaky: EventBus = {
        prefix: "aps",
        publish: async (e) => {
          calls++;
          if (calls === 3) throw new Error("bus unavailable (once)");
          await bus.publish(e);
        },
        consume: () => bus.consume(),
        subscribe: () => bus.subscribe(),
        close: async () => {},
      };
      const ids: string[] = [];
      for (let i = 0; i < 6; i++)
        ids.push(
          await withTransaction(db.pool, (tx) =>
            enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes(`m${i}`) }),
          ),
        );
      const w = watched(db.pool);
      const r = relay(flaky, {}, w.pool);
      r.start();
      await waitFor("an empty backlog", async () => (await r.backlog()) === 0);
      // two passes begun after it, run to their end, to (wrongly) publish anything again
      const emptied = w.passes();
      await waitFor("two passes after the backlog emptied", () => w.passes() >= emptied + 2);
      await r.stop();
      expect(bus.published.map((e) => e.eventId)).toEqual(ids);
    });

    it("pipelines a batch on a bus that keeps the order of concurrent publishes, in seq order, and marks every row", async () => {
      const bus = new PipelineBus();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++)
        ids.push(
          await withTransaction(db.pool, (tx) =>
            enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes(`b${i}`) }),
          ),
        );
      const r = relay(bus, { batchSize: 100 });
      await r.drain();
      // all 30 publishes were in flight together (one batch), started in seq order
      expect(bus.maxInFlight).toBe(30);
      expect(bus.stored.map((e) => e.eventId)).toEqual(ids);
      expect(bus.calls).toBe(30);
      expect(await r.backlog()).toBe(0);
      const rows = await db.pool.query<{ published_at: Date | null; attempts: number }>(
        "SELECT published_at, attempts FROM outbox ORDER BY seq",
      );
      expect(rows.rows.every((x) => x.published_at instanceof Date && x.attempts === 0)).toBe(true);
    });

    it("after a failure inside a pipelined batch marks only the rows before it, retries from it, and delivers every event once", async () => {
      const bus = new PipelineBus([3]);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++)
        ids.push(
          await withTransaction(db.pool, (tx) =>
            enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes(`f${i}`) }),
          ),
        );
      const r = relay(bus);
      await expect(r.drain()).rejects.toThrow(/bus unavailable \(call 3\)/);
      const rows = async () =>
        (
          await db.pool.query<{ published: boolean; attempts: number }>(
            "SELECT published_at IS NOT NULL AS published, attempts FROM outbox ORDER BY seq",
          )
        ).rows;
      // rows 1–2 published; row 3 failed once; rows 4–6 reached the bus but stay unmarked
      expect(await rows()).toEqual([
        { published: true, attempts: 0 },
        { published: true, attempts: 0 },
        { published: false, attempts: 1 },
        { published: false, attempts: 0 },
        { published: false, attempts: 0 },
        { published: false, attempts: 0 },
      ]);
      await r.drain();
      expect((await rows()).every((x) => x.published)).toBe(true);
      // rows 1–2 were not sent again; 3–6 were (the bus dropped 4–6 as duplicates): each event once
      expect(bus.calls).toBe(6 + 4);
      expect(bus.stored.map((e) => e.eventId).sort()).toEqual([...ids].sort());
      expect(bus.stored.slice(0, 2).map((e) => e.eventId)).toEqual(ids.slice(0, 2));
    });

    it("keeps the backoff after a failed pass: commits during a bus outage do not trigger extra publishes", async () => {
      const bus = new RecordingBus(1);
      await withTransaction(db.pool, (tx) => enqueueEvent(tx, { subject: "forum.vote_cast", payload: bytes("x") }));
      const w = watched(db.pool);
      const r = relay(bus, { pollMs: 60_000 }, w.pool);
      r.start();
      // The failed pass has ended — counting the attempt is its last step — and the relay waits out
      // its backoff: 200 ms after the first failure. (This looks in a later event-loop turn than
      // the one that ended the pass, so its failure is counted by now.)
      const failedAt = await waitUntil("the failed pass's end", () => w.endOf("UPDATE outbox SET attempts"), {
        timeoutMs: 15_000,
        intervalMs: 5,
      });
      expect(bus.calls).toBe(1);
      for (let i = 0; i < 20; i++) r.notify();
      await waitFor("the retry", () => bus.published.length === 1, 5_000);
      // the notifies did not cut the backoff short: the retry came no earlier than 200 ms after the
      // failure (5 % and 2 ms of slack for the timer's clock, see bus.test.ts), and was the only one
      expect(bus.callAt[1]! - failedAt).toBeGreaterThanOrEqual(200 * 0.95 - 2);
      expect(bus.calls).toBe(2);
    });

    it("publishes, on its safety poll, rows committed through another connection pool without a notify", async () => {
      const bus = new RecordingBus();
      const w = watched(db.pool);
      const r = relay(bus, { pollMs: 50 }, w.pool);
      r.start();
      // the start's pass has looked (and found nothing): the row below is found by the poll
      await waitFor("the start's pass", () => w.passEnded());
      // another process (its own pool) committed and died before relaying: nobody calls notify()
      const other = url
        ? new pg.Pool({ connectionString: url, max: 1, options: "-c search_path=outbox_test" })
        : db.pool;
      try {
        const id = await withTransaction(other, (tx) =>
          enqueueEvent(tx, { subject: "forum.post_created", payload: bytes("orphan") }),
        );
        await waitFor("the orphan row published", () => bus.published.some((e) => e.eventId === id), 5_000);
      } finally {
        if (other !== db.pool) await other.end();
      }
    });

    it("runs processOnce's effect once for a duplicate eventId, also for concurrent calls", async () => {
      /**
       * The effect: one row in `effects`; the transaction then stays open until the `others`
       * concurrent calls of the same event wait for it (blocked on its processed_events row), so
       * that they really overlap.
       */
      const effect =
        (consumer: string, eventId: string, others = 0) =>
        async (tx: import("pg").PoolClient) => {
          await tx.query("INSERT INTO effects (consumer, event_id) VALUES ($1, $2)", [consumer, eventId]);
          await waitUntil(
            `${others} concurrent call(s) of ${eventId} blocked behind this one`,
            async () => {
              const r = await tx.query(
                "SELECT count(DISTINCT pid) AS n FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))",
              );
              return Number(r.rows[0].n) >= others;
            },
            { timeoutMs: 10_000, intervalMs: 10 },
          );
        };
      const count = async (consumer: string, eventId: string) =>
        Number(
          (
            await db.pool.query("SELECT count(*) AS n FROM effects WHERE consumer = $1 AND event_id = $2", [
              consumer,
              eventId,
            ])
          ).rows[0].n,
        );

      // Sequential redelivery.
      expect(await processOnce(db.pool, "forum-tally", "01EVENTA", effect("forum-tally", "01EVENTA"))).toBe(true);
      expect(await processOnce(db.pool, "forum-tally", "01EVENTA", effect("forum-tally", "01EVENTA"))).toBe(false);
      expect(await count("forum-tally", "01EVENTA")).toBe(1);

      // Concurrent redelivery (two consumer replicas, or a redelivery racing the first delivery).
      const both = await Promise.all([
        processOnce(db.pool, "forum-tally", "01EVENTB", effect("forum-tally", "01EVENTB", 1)),
        processOnce(db.pool, "forum-tally", "01EVENTB", effect("forum-tally", "01EVENTB", 1)),
      ]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect(await count("forum-tally", "01EVENTB")).toBe(1);

      const five = await Promise.all(
        Array.from({ length: 5 }, () =>
          processOnce(db.pool, "forum-tally", "01EVENTC", effect("forum-tally", "01EVENTC", 4)),
        ),
      );
      expect(five.filter(Boolean)).toHaveLength(1);
      expect(await count("forum-tally", "01EVENTC")).toBe(1);

      // Another consumer of the same event has its own record.
      expect(await processOnce(db.pool, "identity-sagacity", "01EVENTA", effect("identity-sagacity", "01EVENTA"))).toBe(
        true,
      );
      expect(await count("identity-sagacity", "01EVENTA")).toBe(1);
      expect(Number((await db.pool.query("SELECT count(*) AS n FROM processed_events")).rows[0].n)).toBe(4);
    });

    it("lets a redelivery run the effect again when the first attempt failed (nothing recorded)", async () => {
      await expect(
        processOnce(db.pool, "forum-tally", "01EVENTD", async (tx) => {
          await tx.query("INSERT INTO effects (consumer, event_id) VALUES ('forum-tally', '01EVENTD')");
          throw new Error("effect failed half-way");
        }),
      ).rejects.toThrow("effect failed half-way");
      expect(Number((await db.pool.query("SELECT count(*) AS n FROM effects")).rows[0].n)).toBe(0);
      expect(
        await processOnce(db.pool, "forum-tally", "01EVENTD", async (tx) => {
          await tx.query("INSERT INTO effects (consumer, event_id) VALUES ('forum-tally', '01EVENTD')");
        }),
      ).toBe(true);
      expect(Number((await db.pool.query("SELECT count(*) AS n FROM effects")).rows[0].n)).toBe(1);
    });

    it("published: resolves once the committed event is on the bus, false after its timeout while the bus refuses it, and true for one another relay published", async () => {
      const enqueue = (eventId: string) =>
        withTransaction(db.pool, (tx) =>
          enqueueEvent(tx, { subject: "identity.access_changed", eventId, payload: bytes("x") }),
        );
      // A bus that refuses every publish (down): the wait ends at its timeout, the row still there.
      const down = new RecordingBus(Number.MAX_SAFE_INTEGER);
      const stuck = relay(down);
      stuck.start();
      await enqueue("01ANNOUNCE0");
      const started = Date.now();
      expect(await stuck.published(["01ANNOUNCE0"], 300)).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(down.calls).toBeGreaterThan(0); // it was woken and tried
      await stuck.stop();

      // A working bus: the wait ends when the relay has published the row, not before.
      const bus = new RecordingBus();
      const working = relay(bus);
      await enqueue("01ANNOUNCE1");
      const waiting = working.published(["01ANNOUNCE0", "01ANNOUNCE1"], 15_000);
      working.start();
      expect(await waiting).toBe(true);
      expect(bus.published.map((e) => e.eventId)).toEqual(["01ANNOUNCE0", "01ANNOUNCE1"]);
      const left = await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL");
      expect(left.rows[0].n).toBe(0);

      // Published by another replica's relay: a relay that publishes nothing itself still sees it.
      const other = relay(new RecordingBus(Number.MAX_SAFE_INTEGER));
      expect(await other.published(["01ANNOUNCE1"], 1_000)).toBe(true);
    });
  },
);

describe("the typed-row guard header (docs/design/events.md#outbox)", () => {
  it("is a header nats.js refuses, so a relay of the release before cannot publish a typed row with an empty payload", () => {
    // what that relay's JetStreamBus.publish does with each header of the row
    expect(() => natsHeaders().set(TYPED_ROW_GUARD.name, TYPED_ROW_GUARD.value)).toThrow(/invalid header value/);
    expect(JSON.parse(typedOutboxEvent("forum.post_on_agenda", { eventId: "e1", postId: "p" })).headers).toMatchObject({
      [TYPED_ROW_GUARD.name]: TYPED_ROW_GUARD.value,
      "aps-event-type": "forum.post_on_agenda",
    });
  });
});
