import { createLogger, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, type TestDatabase } from "@aps/testkit";
import { postgresAvailable, testPost } from "./postgres.fixture.js";
import { PostgresEngine, SEARCH_BOUNDS } from "./postgres-engine.js";
import { knowledgeCacheLookups } from "../metrics.js";

/**
 * The result cache's promise (docs/design/search-and-translation.md#result-cache), on the real
 * PostgreSQL with a clock the test moves: a write through this engine — an upsert, an edit, a
 * retag, a removal — reaches the next search at once when the document holds a term the answer
 * was read through or one its last word prefixes; a write through another engine on the same
 * index (another replica) reaches it once the answer is `ttlMs` old, not before.
 */
const pgUp = await postgresAvailable();
const d = pgUp ? describe : describe.skip;

d(pgUp ? "PostgresEngine result cache (real PostgreSQL)" : "result cache (SKIPPED: no PostgreSQL)", () => {
  const TTL = 10_000;
  let now = 5_000_000;
  let tdb: TestDatabase;
  let db: Database;
  let engine: PostgresEngine;
  /** Another replica on the same index, with its own cache. */
  let other: PostgresEngine;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    const log = createLogger("knowledge-test", "warn");
    db = await openDatabase({ url: tdb.url, schema: "knowledge", log, poolSize: 3 });
    const results = { maxEntries: 100, ttlMs: TTL, now: () => now };
    engine = new PostgresEngine(db, log, SEARCH_BOUNDS, { results });
    other = new PostgresEngine(db, log, SEARCH_BOUNDS, { results });
    await engine.init();
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
  const ids = async (q: string, tags = ["post"]) => (await engine.search(q, tags, 10)).hits.map((h) => h.id).sort();

  it("a write here that holds a term of the answer reaches the next search at once", async () => {
    const a = testPost(1, "Gateway timeouts", "The gateway answers 504 after 30 s.");
    await engine.upsert([a]);
    expect(await ids("gateway")).toEqual([a.id]);
    const b = testPost(2, "Another gateway", "A second gateway in front of the first.");
    await engine.upsert([b]);
    expect(await ids("gateway")).toEqual([a.id, b.id].sort());
    // an edit that takes the word out
    await engine.upsert([{ ...b, title: "Another proxy", body: "A second proxy in front of the first." }]);
    expect(await ids("gateway")).toEqual([a.id]);
    await engine.remove([a.id]);
    expect(await ids("gateway")).toEqual([]);
  });

  it("a new term the last word prefixes reaches the next search at once", async () => {
    const c = testPost(3, "Sharding plan", "Shard the forum by post id.");
    await engine.upsert([c]);
    expect(await ids("shardin")).toEqual([c.id]);
    const e = testPost(4, "Shardingcoordinator", "One coordinator of the shards.");
    await engine.upsert([e]);
    expect(await ids("shardin")).toEqual([c.id, e.id].sort());
  });

  it("a retag reaches a search filtered by tags at once", async () => {
    const f = testPost(5, "Replication lag", "Replicas fall behind under bursts.", "open");
    await engine.upsert([f]);
    expect(await ids("replicas", ["open"])).toEqual([f.id]);
    await engine.retag(f.id, (tags) => tags.map((t) => (t === "open" ? "review" : t)));
    expect(await ids("replicas", ["open"])).toEqual([]);
    expect(await ids("replicas", ["review"])).toEqual([f.id]);
  });

  it("a write through another replica reaches this one's cached answer once it is ttlMs old", async () => {
    const g = testPost(6, "Quota sizing", "Size the quota per agent.");
    await engine.upsert([g]);
    expect(await ids("quota")).toEqual([g.id]);
    const h = testPost(7, "Quota alerts", "Alert when a quota runs out.");
    await other.upsert([h]);
    // the other replica's own answer is fresh; this one's is served from its cache until ttlMs
    expect((await other.search("quota", ["post"], 10)).hits.map((x) => x.id).sort()).toEqual([g.id, h.id].sort());
    now += TTL - 1;
    expect(await ids("quota")).toEqual([g.id]);
    now += 1;
    expect(await ids("quota")).toEqual([g.id, h.id].sort());
  });

  it('counts each `all` search\'s lookup in aps_knowledge_cache_lookups_total{cache="search_results"}', async () => {
    const count = async (result: string) =>
      (await knowledgeCacheLookups.get()).values.find(
        (v) => v.labels.cache === "search_results" && v.labels.result === result,
      )?.value ?? 0;
    const [hits, misses] = [await count("hit"), await count("miss")];
    await engine.upsert([testPost(9, "Metrics of caches", "Counted lookups.")]);
    await ids("counted");
    await ids("counted");
    await ids("counted");
    expect([(await count("hit")) - hits, (await count("miss")) - misses]).toEqual([2, 1]);
  });
});
