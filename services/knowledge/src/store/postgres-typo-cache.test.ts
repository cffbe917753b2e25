import { createLogger, openDatabase, type Database } from "@aps/platform";
import { createTestDatabase, type TestDatabase } from "@aps/testkit";
import { postgresAvailable, testPost } from "./postgres.fixture.js";
import { PostgresEngine, SEARCH_BOUNDS, TYPO_CACHE } from "./postgres-engine.js";
import { knowledgeCacheLookups } from "../metrics.js";

/**
 * The typo-candidate cache's promise (docs/design/search-and-translation.md#typo-candidate-cache), on
 * the real PostgreSQL with a clock the test moves: a word's typo candidates are reused for
 * `ttlMs`, so a term new to the vocabulary becomes a typo form of a cached word only after it; a
 * cached candidate no document holds any more is dropped at once (document frequencies are read
 * fresh); a search answered from the cache ranks as one that read the candidates.
 */
const pgUp = await postgresAvailable();
const d = pgUp ? describe : describe.skip;

d(
  pgUp ? "PostgresEngine typo-candidate cache (real PostgreSQL)" : "typo-candidate cache (SKIPPED: no PostgreSQL)",
  () => {
    const TTL = 60_000;
    let now = 1_000_000;
    let tdb: TestDatabase;
    let db: Database;
    let engine: PostgresEngine;
    /** A second engine on the same index with no cache entry: what a search reads without the cache. */
    let uncached: () => PostgresEngine;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      const log = createLogger("knowledge-test", "warn");
      db = await openDatabase({ url: tdb.url, schema: "knowledge", log, poolSize: 3 });
      // the result cache off: every search here reads its word forms
      const results = { maxEntries: 0, ttlMs: 0 };
      engine = new PostgresEngine(db, log, SEARCH_BOUNDS, {
        typos: { maxWords: 100, ttlMs: TTL, now: () => now },
        results,
      });
      uncached = () =>
        new PostgresEngine(db, log, SEARCH_BOUNDS, { typos: { ...TYPO_CACHE, now: () => now }, results });
      await engine.init();
    });
    afterAll(async () => {
      await db?.close();
      await tdb?.drop();
    });
    const ids = async (e: PostgresEngine, q: string) => (await e.search(q, ["post"], 10)).hits.map((h) => h.id);

    it("a new typo form is found once the word's entry is older than ttlMs; one gone is dropped at once", async () => {
      const a = testPost(1, "Connection pooling", "Pool connections with pgbouncer in transaction mode.");
      await engine.upsert([a]);
      // "pgbounzer" is one letter off "pgbouncer": found through the trigram query, then cached
      expect(await ids(engine, "pgbounzer")).toEqual([a.id]);

      const b = testPost(2, "Another pooler", "The pgbouncex fork keeps prepared statements.");
      await engine.upsert([b]);
      // "pgbouncex" is new to the vocabulary and one letter off "pgbounzer" too: a search that reads
      // the candidates finds both at once, the cached word only after its entry is ttlMs old
      expect((await ids(uncached(), "pgbounzer")).sort()).toEqual([a.id, b.id].sort());
      now += TTL - 1;
      expect(await ids(engine, "pgbounzer")).toEqual([a.id]);
      now += 1;
      expect((await ids(engine, "pgbounzer")).sort()).toEqual([a.id, b.id].sort());

      // a cached candidate no document holds any more matches nothing, within the entry's life
      await engine.remove([a.id]);
      expect(await ids(engine, "pgbounzer")).toEqual([b.id]);
    });

    it("a search answered from the cache ranks its hits as one that read the candidates", async () => {
      await engine.upsert([
        testPost(10, "Replication slots", "Logical replication slots hold WAL until the subscriber confirms."),
        testPost(11, "Replicaton lag", "Lag of a replica: replication falls behind under write bursts."),
        testPost(12, "Slots and lag", "Replicatoin of slots across regions."),
      ]);
      const q = "replicatio slots";
      const first = await engine.search(q, ["post"], 10);
      const cachedAnswer = await engine.search(q, ["post"], 10); // the words' candidates from the cache
      const fresh = await uncached().search(q, ["post"], 10);
      expect(first.hits.length).toBeGreaterThan(1);
      expect(cachedAnswer).toEqual(fresh);
      expect(first).toEqual(fresh);
    });

    it('counts each word with a typo budget in aps_knowledge_cache_lookups_total{cache="typo_candidates"}', async () => {
      const count = async (result: string) =>
        (await knowledgeCacheLookups.get()).values.find(
          (v) => v.labels.cache === "typo_candidates" && v.labels.result === result,
        )?.value ?? 0;
      const [hits, misses] = [await count("hit"), await count("miss")];
      // two words with a typo budget, read then reused; "of" has none and is not counted
      await engine.search("kubernetez of clusterz", ["post"], 10);
      await engine.search("kubernetez of clusterz", ["post"], 10);
      expect([(await count("hit")) - hits, (await count("miss")) - misses]).toEqual([2, 2]);
    });
  },
);
