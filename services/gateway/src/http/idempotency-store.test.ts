import { fileURLToPath } from "node:url";
import { createLogger, migrate, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import {
  IDEMPOTENCY_STALE_MS,
  IDEMPOTENCY_TTL_MS,
  MemoryIdempotencyStore,
  PgIdempotencyStore,
  type IdempotencyAnswer,
  type IdempotencyStore,
} from "./idempotency-store.js";

/**
 * The gateway's HTTP Idempotency-Key records (docs/design/edge.md#idempotency-key, moved from identity; rules of
 * docs/design/edge.md#idempotency-key): the same cases for the PostgreSQL store (shared by replicas) and the in-process
 * one (the embedded all-in-one).
 */
const log = createLogger("idempotency-store-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn("[idempotency-store.test] NO PostgreSQL: the PostgreSQL store's cases are SKIPPED");

const done = (status: number, body: string, location = ""): IdempotencyAnswer => ({
  status,
  body,
  contentType: "application/json",
  location,
  release: false,
});
const release: IdempotencyAnswer = { status: 500, body: "", contentType: "", location: "", release: true };

let tdb: TestDatabase | undefined;
let db: Database | undefined;
if (pgUp) {
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "gateway", poolSize: 8, log });
    await migrate(db, fileURLToPath(new URL("../migrations", import.meta.url)), log);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
}

const kinds: [string, boolean, (clock: SetClock) => IdempotencyStore][] = [
  ["PostgreSQL", pgUp, (clock) => new PgIdempotencyStore(db!.pool, clock)],
  ["in-process", true, (clock) => new MemoryIdempotencyStore(clock)],
];

describe.each(kinds)("Idempotency-Key records (%s)", (_name, up, make) => {
  const it_ = up ? it : it.skip;
  let clock: SetClock;
  let store: IdempotencyStore;
  let n = 0;
  const agent = () => `ext_${_name === "PostgreSQL" ? "p" : "m"}${++n}`;
  beforeEach(() => {
    clock = new SetClock(new Date("2026-04-10T23:59:00Z"));
    if (up) store = make(clock);
  });

  it_("proceeds once, replays the stored answer, reports in-progress and mismatch; keys are per agent", async () => {
    const [a, b] = [agent(), agent()];
    expect(await store.begin(a, "k1", "h1")).toEqual({ state: "proceed" });
    expect(await store.begin(a, "k1", "h1")).toEqual({ state: "in_progress" });
    expect(await store.begin(a, "k1", "h2")).toEqual({ state: "mismatch" });
    expect(await store.begin(b, "k1", "h1")).toEqual({ state: "proceed" });
    await store.finish(a, "k1", done(201, '{"id":"p_1"}', "/v1/posts/p_1"));
    expect(await store.begin(a, "k1", "h1")).toEqual({
      state: "replay",
      status: 201,
      body: '{"id":"p_1"}',
      contentType: "application/json",
      location: "/v1/posts/p_1",
    });
    expect(await store.begin(a, "k1", "h2")).toEqual({ state: "mismatch" });
  });

  it_("a released claim can be taken again; an abandoned one after 60 s by the same request only", async () => {
    const a = agent();
    expect((await store.begin(a, "k", "h")).state).toBe("proceed");
    await store.finish(a, "k", release);
    expect((await store.begin(a, "k", "h")).state).toBe("proceed");
    clock.at = new Date(clock.at.getTime() + IDEMPOTENCY_STALE_MS - 1);
    expect((await store.begin(a, "k", "h")).state).toBe("in_progress");
    clock.at = new Date(clock.at.getTime() + 2);
    expect((await store.begin(a, "k", "other")).state).toBe("mismatch");
    expect((await store.begin(a, "k", "h")).state).toBe("proceed");
  });

  it_("expires a record after 24 h: the key then starts afresh, even for another request", async () => {
    const a = agent();
    await store.begin(a, "k", "h");
    await store.finish(a, "k", done(200, "{}"));
    clock.at = new Date(clock.at.getTime() + IDEMPOTENCY_TTL_MS);
    expect((await store.begin(a, "k", "h2")).state).toBe("mismatch"); // exactly 24 h: still kept
    clock.at = new Date(clock.at.getTime() + 1);
    expect((await store.begin(a, "k", "h2")).state).toBe("proceed");
  });
});

(pgUp ? describe : describe.skip)("Idempotency-Key records shared by replicas (PostgreSQL)", () => {
  it("two gateways racing on one key: exactly one proceeds; the other replays its stored answer", async () => {
    const clock = new SetClock(new Date("2026-04-10T23:59:00Z"));
    const [g1, g2] = [new PgIdempotencyStore(db!.pool, clock), new PgIdempotencyStore(db!.pool, clock)];
    const states = await Promise.all([g1.begin("ext_race", "k", "h"), g2.begin("ext_race", "k", "h")]);
    expect(states.map((s) => s.state).sort()).toEqual(["in_progress", "proceed"]);
    const winner = states[0].state === "proceed" ? g1 : g2;
    await winner.finish("ext_race", "k", done(201, '{"id":"p_9"}'));
    expect(await (winner === g1 ? g2 : g1).begin("ext_race", "k", "h")).toMatchObject({ state: "replay", status: 201 });
  });
});

describe("MemoryIdempotencyStore bound", () => {
  it("keeps at most maxRecords, dropping the oldest claim first", async () => {
    const store = new MemoryIdempotencyStore(new SetClock(new Date("2026-04-10T00:00:00Z")), 2);
    for (const k of ["a", "b", "c"]) await store.begin("ext_1", k, "h");
    expect((await store.begin("ext_1", "c", "h")).state).toBe("in_progress");
    expect((await store.begin("ext_1", "a", "h")).state).toBe("proceed"); // "a" was dropped
  });
});
