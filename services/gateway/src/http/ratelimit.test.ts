import { fileURLToPath } from "node:url";
import pg from "pg";
import { createLogger, migrate, openDatabase, rateLimitStoreFailures, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, scaled, waitUntil, type TestDatabase } from "@aps/testkit";
import { rateLimitHeaderValues, RequestRateLimiter } from "./ratelimit.js";
import { BatchedCounter, DEFAULT_BATCH } from "./rate-batch.js";
import { CoalescedRateStore } from "./rate-store.js";

/**
 * The limiter itself (docs/design/identity-and-abuse.md#per-minute-request-limits): counting, separate budgets per policy and partition, the IETF
 * header syntax, and the fallback when the shared store is unreachable (a stub: a PostgreSQL
 * pool pointed at a closed port, since the machine's server must not be stopped).
 */
describe("RequestRateLimiter", () => {
  it("counts per policy and partition; the N+1th request in a window is refused with the seconds left", async () => {
    const rl = new RequestRateLimiter({ keyedPerMinute: 3, anonPerMinute: 2 }, { kind: "memory" });
    const keyed = [];
    const t0 = Date.now();
    for (let i = 0; i < 4; i++) keyed.push(await rl.consume("keyed", "ext_A"));
    const took = Date.now() - t0;
    expect(keyed.map((s) => [s.allowed, s.used, s.remaining])).toEqual([
      [true, 1, 2],
      [true, 2, 1],
      [true, 3, 0],
      [false, 4, 0],
    ]);
    // the window opened at the first request, at most `took` ms before the fourth: 59–60 s left, less only when the requests took longer
    expect(keyed[3]!.resetSeconds).toBeGreaterThanOrEqual(Math.min(59, Math.ceil((60_000 - took) / 1000)));
    expect(keyed[3]!.resetSeconds).toBeLessThanOrEqual(60);
    // another agent, and the anonymous policy for the same string, have their own budgets
    expect(await rl.consume("keyed", "ext_B")).toMatchObject({ allowed: true, remaining: 2, limit: 3 });
    expect(await rl.consume("anon", "ext_A")).toMatchObject({ allowed: true, remaining: 1, limit: 2, policy: "anon" });
    // peek does not count
    expect(await rl.peek("keyed", "ext_B")).toMatchObject({ used: 1, remaining: 2 });
    expect(await rl.peek("keyed", "ext_B")).toMatchObject({ used: 1, remaining: 2 });
    expect(await rl.peek("anon", "10.0.0.9")).toEqual({
      policy: "anon",
      limit: 2,
      used: 0,
      remaining: 2,
      resetSeconds: 0,
    });
  });

  it("policy source: its own limit (default 5 × keyed), one budget per source string (docs/design/identity-and-abuse.md#budgets-per-source)", async () => {
    expect(new RequestRateLimiter({ keyedPerMinute: 3, anonPerMinute: 2 }, { kind: "memory" }).limitOf("source")).toBe(
      15,
    );
    const rl = new RequestRateLimiter({ keyedPerMinute: 3, anonPerMinute: 2, sourcePerMinute: 2 }, { kind: "memory" });
    const states = [];
    for (let i = 0; i < 3; i++) states.push(await rl.consume("source", "203.0.113.0/24"));
    expect(states.map((s) => [s.policy, s.allowed, s.remaining])).toEqual([
      ["source", true, 1],
      ["source", true, 0],
      ["source", false, 0],
    ]);
    expect(await rl.consume("source", "198.51.100.0/24")).toMatchObject({ allowed: true, remaining: 1, limit: 2 });
    // the keyed budget of an agent is apart from any source's
    expect(await rl.consume("keyed", "203.0.113.0/24")).toMatchObject({ allowed: true, remaining: 2 });
  });

  it("writes draft-ietf-httpapi-ratelimit-headers-10 field values", () => {
    expect(rateLimitHeaderValues({ policy: "keyed", limit: 600, used: 1, remaining: 599, resetSeconds: 42 })).toEqual({
      policy: '"keyed";q=600;w=60',
      limit: '"keyed";r=599;t=42',
    });
  });

  it("with the PostgreSQL store unreachable (stub: a closed port), limits still hold per process (insurance limiter), never unlimited", async () => {
    const pool = new pg.Pool({
      connectionString: "postgres://postgres@127.0.0.1:1/none",
      connectionTimeoutMillis: 500,
    });
    pool.on("error", () => undefined);
    try {
      const rl = new RequestRateLimiter(
        { keyedPerMinute: 2, anonPerMinute: 2 },
        { kind: "postgres", pool, schema: "gateway" },
      );
      const states = [];
      for (let i = 0; i < 3; i++) states.push(await rl.consume("anon", "192.0.2.1"));
      expect(states.map((s) => [s.allowed, s.remaining])).toEqual([
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
    } finally {
      await pool.end();
    }
  });
});

const pgUp = await hasPostgres();
if (!pgUp) console.warn("[ratelimit.test] NO PostgreSQL at 127.0.0.1:5432: the batched shared-store tests are SKIPPED");

/**
 * The shared PostgreSQL store with local counting and batched reconciliation (docs/design/identity-and-abuse.md#counting-across-replicas),
 * on the real server: two limiters on one store stand for two gateway replicas. Store writes are
 * counted on the real pool (every rate-limiter-flexible upsert is one INSERT … ON CONFLICT).
 */
(pgUp ? describe : describe.skip)(
  "RequestRateLimiter on the shared PostgreSQL store, batched (real)" + (pgUp ? "" : " (SKIPPED: no PostgreSQL)"),
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let writes = 0;
    /** The names of the named (server-side prepared) statements the pool was sent. */
    const named: string[] = [];
    const limiters: RequestRateLimiter[] = [];
    const replica = (keyed: number, anon: number) => {
      const rl = new RequestRateLimiter(
        { keyedPerMinute: keyed, anonPerMinute: anon },
        { kind: "postgres", pool: db.pool, schema: db.schema },
      );
      limiters.push(rl);
      return rl;
    };

    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "gateway", log: createLogger("ratelimit-test", "silent") });
      await migrate(
        db,
        fileURLToPath(new URL("../migrations", import.meta.url)),
        createLogger("ratelimit-test", "silent"),
      );
      const query = db.pool.query.bind(db.pool) as (...a: unknown[]) => unknown;
      (db.pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        const q = a[0] as string | { text?: string; name?: string };
        if (typeof q !== "string" && q.name) named.push(q.name);
        if (/INSERT INTO/i.test(typeof q === "string" ? q : (q.text ?? ""))) writes++;
        return query(...a);
      };
    });
    afterAll(async () => {
      for (const rl of limiters) await rl.close();
      await db?.close();
      await tdb?.drop();
    });

    it("far from the limit, 1 000 requests cost a few dozen store writes and the shared count is exact after the flush", async () => {
      const a = replica(1_000_000, 1_000_000);
      const before = writes;
      const states = [];
      for (let i = 0; i < 1_000; i++) states.push(await a.consume("anon", "198.51.100.1"));
      expect(states.every((s) => s.allowed)).toBe(true);
      // `used` as this replica knows it never goes backwards and ends at the number sent
      expect(states.map((s) => s.used)).toEqual(states.map((_, i) => i + 1));
      await a.close();
      const spent = writes - before;
      expect(spent).toBeLessThanOrEqual(1_000 / 32 + 10);
      // another replica reads the shared count: every request is there
      const b = replica(1_000_000, 1_000_000);
      expect(await b.peek("anon", "198.51.100.1")).toMatchObject({ used: 1_000, remaining: 1_000_000 - 1_000 });
      console.log(`[ratelimit] 1000 requests far from the limit: ${spent} store writes`);
    });

    it("a partition's first 32 requests in a window, under a limit above the headroom, cost no store write; the 33rd sends all 33 (docs/design/identity-and-abuse.md#counting-across-replicas)", async () => {
      const a = replica(600, 600);
      const before = writes;
      // 200 agents, five requests each: what most agents send in a minute
      for (let round = 1; round <= 5; round++) {
        const rs = await Promise.all(Array.from({ length: 200 }, (_, i) => a.consume("keyed", `ext_QUIET${i}`)));
        expect(rs.map((r) => [r.allowed, r.used])).toEqual(rs.map(() => [true, round]));
        expect(rs.every((r) => r.resetSeconds > 0 && r.resetSeconds <= 60)).toBe(true);
      }
      expect(writes - before).toBe(0);
      // this replica's view counts them; the store has none of them yet
      expect(await a.peek("keyed", "ext_QUIET7")).toMatchObject({ used: 5 });
      expect(await replica(600, 600).peek("keyed", "ext_QUIET7")).toMatchObject({ used: 0 });
      // one agent goes on: the 33rd request of its window sends the 33 in one write
      for (let i = 0; i < 32; i++) expect((await a.consume("keyed", "ext_BUSY")).used).toBe(i + 1);
      expect(writes - before).toBe(0);
      expect(await a.consume("keyed", "ext_BUSY")).toMatchObject({ allowed: true, used: 33 });
      expect(writes - before).toBe(1);
      expect(await replica(600, 600).peek("keyed", "ext_BUSY")).toMatchObject({ used: 33 });
    });

    it("a local window that ends before its batch fills is dropped uncounted; a graceful close sends the open ones", async () => {
      const windowMs = scaled(1_000);
      const store = new CoalescedRateStore(db.pool, `"${db.schema}".rate_limits`, windowMs, scaled(10_000));
      const counter = new BatchedCounter(
        600,
        (partition, n) => store.add(`keyed:${partition}`, n),
        DEFAULT_BATCH,
        windowMs,
      );
      const before = writes;
      for (let i = 0; i < 5; i++) await counter.consume("ext_SHORT");
      expect(counter.pendingOf("ext_SHORT")).toBe(5);
      // the window's end passes: the five are gone, and the next request opens a new local window
      await waitUntil("the local window to end", () => counter.pendingOf("ext_SHORT") === 0);
      expect(await counter.consume("ext_SHORT")).toMatchObject({ allowed: true, used: 1 });
      await counter.consume("ext_OPEN");
      await counter.close();
      // close sent the two open windows (one request each, in one statement or two), never the ended one
      expect(writes - before).toBeGreaterThanOrEqual(1);
      expect(writes - before).toBeLessThanOrEqual(2);
      const rows = await db.pool.query<{ key: string; points: number }>(
        `SELECT key, points FROM "${db.schema}".rate_limits WHERE key IN ('keyed:ext_SHORT', 'keyed:ext_OPEN') ORDER BY key`,
      );
      expect(rows.rows).toEqual([
        { key: "keyed:ext_OPEN", points: 1 },
        { key: "keyed:ext_SHORT", points: 1 },
      ]);
    });

    it("within the headroom every request is counted in the store first: two replicas in parallel admit exactly the limit", async () => {
      const a = replica(100, 100);
      const b = replica(100, 100);
      const rs = await Promise.all(
        Array.from({ length: 130 }, (_, i) => (i % 2 ? a : b).consume("keyed", "ext_EXACT")),
      );
      const ok = rs.filter((r) => r.allowed);
      expect(ok).toHaveLength(100);
      expect(new Set(ok.map((r) => r.used)).size).toBe(100);
      // once a replica knows the window is spent it refuses without writing
      await a.consume("keyed", "ext_EXACT");
      await b.consume("keyed", "ext_EXACT");
      const before = writes;
      for (let i = 0; i < 50; i++) expect((await (i % 2 ? a : b).consume("keyed", "ext_EXACT")).allowed).toBe(false);
      expect(writes - before).toBe(0);
      expect((await a.peek("keyed", "ext_EXACT")).remaining).toBe(0);
    });

    it("a burst across two replicas above the headroom passes the limit by at most 2 × 32 (docs/design/identity-and-abuse.md#counting-across-replicas), never less than the limit", async () => {
      const a = replica(600, 600);
      const b = replica(600, 600);
      // each replica has a fresh view of the partition
      await a.consume("keyed", "ext_BURST");
      await b.consume("keyed", "ext_BURST");
      const rs = await Promise.all(
        Array.from({ length: 800 }, (_, i) => (i % 2 ? a : b).consume("keyed", "ext_BURST")),
      );
      const admitted = 2 + rs.filter((r) => r.allowed).length;
      expect(admitted).toBeGreaterThanOrEqual(600);
      expect(admitted).toBeLessThanOrEqual(600 + 2 * 32);
      for (const r of rs.filter((x) => !x.allowed)) expect(r.remaining).toBe(0);
      console.log(`[ratelimit] 802 requests across two replicas, limit 600: ${admitted} admitted`);
    });

    it("counts arriving together share one store statement (docs/design/identity-and-abuse.md#counting-across-replicas): 60 agents' first requests cost a few writes, not 60", async () => {
      const a = replica(100, 100); // 100 ≤ headroom: every request is counted in the store first
      const before = writes;
      const rs = await Promise.all(Array.from({ length: 60 }, (_, i) => a.consume("keyed", `ext_GROUP${i}`)));
      expect(rs.map((r) => [r.allowed, r.used])).toEqual(rs.map(() => [true, 1]));
      expect(writes - before).toBeLessThanOrEqual(3);
      for (const i of [0, 59])
        expect(await replica(100, 100).peek("keyed", `ext_GROUP${i}`)).toMatchObject({ used: 1 });
      console.log(`[ratelimit] 60 concurrent first requests of 60 agents: ${writes - before} store writes`);
    });

    it("two replicas' concurrent statements over the same keys in opposite orders neither deadlock nor lose a count", async () => {
      // a generous store timeout: on a loaded machine a slow statement must not pass for a failed one
      // (a deadlock is an error PostgreSQL raises after deadlock_timeout, well inside it)
      const patient = (): RequestRateLimiter => {
        const rl = new RequestRateLimiter(
          { keyedPerMinute: 100, anonPerMinute: 100 },
          { kind: "postgres", pool: db.pool, schema: db.schema, timeoutMs: scaled(60_000) },
        );
        limiters.push(rl);
        return rl;
      };
      const a = patient();
      const b = patient();
      const failuresBefore = (await rateLimitStoreFailures.get()).values.reduce((n, v) => n + v.value, 0);
      const keys = Array.from({ length: 400 }, (_, i) => `ext_ORDER${i}`);
      const rs = await Promise.all(
        Array.from({ length: 2 }, () => [
          ...keys.map((k) => a.consume("keyed", k)),
          ...[...keys].reverse().map((k) => b.consume("keyed", k)),
        ]).flat(),
      );
      expect(rs.every((r) => r.allowed)).toBe(true);
      const failures = (await rateLimitStoreFailures.get()).values.reduce((n, v) => n + v.value, 0);
      expect(failures - failuresBefore).toBe(0); // no statement failed (a deadlock would fall back)
      for (const k of keys) expect(await a.peek("keyed", k)).toMatchObject({ used: 4 });
    });

    it("GET /me/quotas' view (peek) includes what this replica admitted and has not sent yet", async () => {
      const a = replica(1_000_000, 1_000_000);
      for (let i = 0; i < 10; i++) await a.consume("keyed", "ext_PEEK");
      expect(await a.peek("keyed", "ext_PEEK")).toMatchObject({ used: 10 });
      await a.close();
      expect(await replica(1_000_000, 1_000_000).peek("keyed", "ext_PEEK")).toMatchObject({ used: 10 });
    });

    it("the counters' table is unlogged (docs/design/identity-and-abuse.md#counting-across-replicas): no WAL, no flush per count", async () => {
      const r = await db.pool.query<{ p: string }>(
        "SELECT relpersistence AS p FROM pg_class WHERE oid = to_regclass($1)",
        [`"${db.schema}".rate_limits`],
      );
      expect(r.rows).toEqual([{ p: "u" }]);
    });

    it("behind PgBouncer in transaction mode (DATABASE_POOLER=transaction) the store's statements go unnamed; on a direct pool rate-limiter-flexible names them", async () => {
      const direct = new RequestRateLimiter(
        { keyedPerMinute: 100, anonPerMinute: 100 },
        { kind: "postgres", pool: db.pool, schema: db.schema, pooler: "none" },
      );
      const pooled = new RequestRateLimiter(
        { keyedPerMinute: 100, anonPerMinute: 100 },
        { kind: "postgres", pool: db.pool, schema: db.schema, pooler: "transaction" },
      );
      limiters.push(direct, pooled);
      await pooled.consume("keyed", "ext_POOLED");
      named.length = 0;
      for (let i = 0; i < 3; i++) expect(await pooled.peek("keyed", "ext_POOLED")).toMatchObject({ used: 1 });
      expect(named).toEqual([]);
      await direct.peek("keyed", "ext_POOLED");
      expect(named).toEqual(["rate_limits:rlflx-get"]);
    });
  },
);
