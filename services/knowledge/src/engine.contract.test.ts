import { EmbeddedEngine, type KnowledgeDoc, type SearchEngine } from "./engine.js";
import { MeiliEngine } from "./meili.js";
import { docsDocuments } from "./sources.js";
import { postgresAvailable, postgresTestIndex, type PostgresTestIndex } from "./store/postgres.fixture.js";

/**
 * ONE contract suite for every SearchEngine (docs/design/search-and-translation.md#search-engines): the embedded engine always, and
 * Meilisearch when MEILISEARCH_URL (+ MEILISEARCH_API_KEY) is set.
 */
const post = (id: string, title: string, body: string, kind: "arch" | "free", status: string): KnowledgeDoc => ({
  id,
  kind: "post",
  title,
  body,
  url: `/v1/posts/${id}`,
  tags: ["post", kind, status],
});

const CORPUS: KnowledgeDoc[] = [
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5001",
    "建议为知识库增加中文分词搜索",
    "现在的搜索只能按空格切分，中文帖子搜不到。",
    "arch",
    "open",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5002",
    "Rate limits for proposals",
    "Every agent may post twenty proposals per day; we should raise it.",
    "arch",
    "adopted",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5003",
    "A note on the weather",
    "Nothing about the platform here, only clouds and rain.",
    "free",
    "discussion",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5004",
    "Add Redis cache 缓存 to the gateway",
    "给网关加一个 Redis 缓存层 so that reads are faster.",
    "arch",
    "review",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5005",
    "Single proposal review",
    "One proposal needs a Council review before hand-off.",
    "arch",
    "open",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5006",
    "Structured concurrency for the council workers",
    "Run every council job in a task group so that cancellation reaches all of them.",
    "arch",
    "agenda",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5007",
    "Worker pools and concurrency limits",
    "Structured logging of the pool; the workers share one queue.",
    "free",
    "discussion",
  ),
  post(
    "p_01JWQYPV8RRNPMN5REKHSD5008",
    "网关限流策略",
    "为网关增加令牌桶限流，防止突发流量压垮服务。",
    "arch",
    "agenda",
  ),
  ...docsDocuments(),
];

/** Runs the contract against the engine `make` builds, inside `d` (`describe.skip` when the engine is absent). */
function contract(name: string, make: () => Promise<SearchEngine>, d: jest.Describe = describe) {
  d(`SearchEngine contract: ${name}`, () => {
    let engine: SearchEngine;
    beforeAll(async () => {
      engine = await make();
      await engine.init();
      await engine.init(); // idempotent
      await engine.upsert(CORPUS);
    });
    afterAll(async () => {
      await engine.remove(CORPUS.map((d) => d.id));
      await engine.close();
    });
    const ids = async (q: string, tags: string[] = [], limit = 20) =>
      (await engine.search(q, tags, limit)).hits.map((h) => h.id);

    it("Chinese: 建议为知识库增加中文分词搜索 is found by 分词 and by 知识库", async () => {
      expect(await ids("分词")).toContain("p_01JWQYPV8RRNPMN5REKHSD5001");
      expect(await ids("知识库")).toContain("p_01JWQYPV8RRNPMN5REKHSD5001");
      expect(await ids("中文 搜索", ["post"])).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5001"]);
    });

    it("English plural and singular match each other", async () => {
      expect(await ids("proposal", ["post"])).toEqual(
        expect.arrayContaining(["p_01JWQYPV8RRNPMN5REKHSD5002", "p_01JWQYPV8RRNPMN5REKHSD5005"]),
      );
      expect(await ids("proposals", ["post"])).toEqual(
        expect.arrayContaining(["p_01JWQYPV8RRNPMN5REKHSD5002", "p_01JWQYPV8RRNPMN5REKHSD5005"]),
      );
      expect(await ids("RATE LIMITS")).toContain("p_01JWQYPV8RRNPMN5REKHSD5002");
    });

    it("mixed Chinese + English queries", async () => {
      expect(await ids("Redis 缓存")).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5004"]);
      expect(await ids("gateway 网关")).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5004"]);
    });

    it("every tag must match (AND)", async () => {
      expect((await ids("proposal", ["post", "adopted"])).sort()).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5002"]);
      expect(await ids("proposal", ["post", "adopted", "free"])).toEqual([]);
      expect((await ids("", ["arch", "open"])).sort()).toEqual([
        "p_01JWQYPV8RRNPMN5REKHSD5001",
        "p_01JWQYPV8RRNPMN5REKHSD5005",
      ]);
    });

    it("tag docs returns only the reference pages", async () => {
      const r = await engine.search("council", ["docs"], 50);
      expect(r.hits.length).toBeGreaterThan(0);
      expect(r.total).toBeGreaterThanOrEqual(r.hits.length);
      for (const h of r.hits) {
        expect(h.kind).toBe("doc");
        expect(h.tags).toEqual(["docs"]);
        expect(h.url).toMatch(/^\/docs\/[a-z-]+\.md$/);
      }
      expect(r.hits.map((h) => h.id)).toContain("doc-council");
    });

    it("snippets mark the matched terms; hits carry id, kind, title, url, tags, score", async () => {
      const [h] = (await engine.search("分词", ["post"], 5)).hits;
      expect(h).toMatchObject({
        id: "p_01JWQYPV8RRNPMN5REKHSD5001",
        kind: "post",
        title: "建议为知识库增加中文分词搜索",
        url: "/v1/posts/p_01JWQYPV8RRNPMN5REKHSD5001",
      });
      expect(h!.tags).toEqual(["post", "arch", "open"]);
      expect(h!.snippet).toContain("**分词**");
      expect(typeof h!.score).toBe("number");
      const [w] = (await engine.search("clouds", [], 5)).hits;
      expect(w!.snippet).toMatch(/\*\*clouds\*\*/i);
    });

    it("limit caps the hits, total counts every match", async () => {
      const r = await engine.search("", ["docs"], 3);
      expect(r.hits).toHaveLength(3);
      expect(r.total).toBe(CORPUS.filter((d) => d.tags.includes("docs")).length);
    });

    it("upsert replaces (a status change moves the tags), remove deletes", async () => {
      const d = CORPUS[0]!;
      await engine.upsert([{ ...d, tags: ["post", "arch", "review"] }]);
      expect(await ids("分词", ["review"])).toEqual([d.id]);
      expect(await ids("分词", ["open"])).toEqual([]);
      await engine.remove([d.id]);
      expect(await ids("分词", ["post"])).toEqual([]);
      await engine.upsert([d]);
      expect(await ids("分词", ["open"])).toEqual([d.id]);
    });

    it("retag (where the engine has it) moves the tags and leaves the text searchable (docs/design/search-and-translation.md#keeping-the-index-current)", async () => {
      if (!engine.retag) {
        console.warn(`[engine contract] ${name} has no retag: its consumer indexes status changes in full`);
        expect(engine.name).toBe("meilisearch");
        return;
      }
      const d = CORPUS[0]!;
      expect(await ids("分词", ["open"])).toEqual([d.id]);
      expect(await engine.retag(d.id, (tags) => tags.map((t) => (t === "open" ? "Agenda" : t)))).toBe(true);
      expect(await ids("分词", ["agenda"])).toEqual([d.id]);
      expect(await ids("分词", ["open"])).toEqual([]);
      expect(await engine.retag("no-such-doc", () => ["post"])).toBe(false);
      expect(await engine.retag(d.id, () => undefined)).toBe(false);
      expect(await ids("分词", ["agenda"])).toEqual([d.id]);
      await engine.upsert([d]);
      expect(await ids("分词", ["open"])).toEqual([d.id]);
    });

    it("a query with no match finds nothing", async () => {
      expect(await engine.search("zzzqqqxxx", [], 10)).toEqual({ hits: [], total: 0 });
    });

    it("similar (any-word matching) finds a near-duplicate title", async () => {
      const r = await engine.search("Raise the rate limits for proposals per agent", ["post"], 5, { match: "any" });
      expect(r.hits[0]?.id).toBe("p_01JWQYPV8RRNPMN5REKHSD5002");
    });

    // typo tolerance (Meilisearch's rule: 1 typo from 5 letters, 2 from 9), prefix on the
    // last word, ranking (every word > some; title > body), Chinese unchanged.
    it("one typo from 5 letters: swapped, dropped or replaced letter", async () => {
      expect(await ids("cocnurrency", ["post"])).toEqual(
        expect.arrayContaining(["p_01JWQYPV8RRNPMN5REKHSD5006", "p_01JWQYPV8RRNPMN5REKHSD5007"]),
      );
      expect(await ids("wokrers", ["post"])).toContain("p_01JWQYPV8RRNPMN5REKHSD5006"); // 7 letters, swap
      expect(await ids("proposl", ["post"])).toContain("p_01JWQYPV8RRNPMN5REKHSD5005"); // drop
      expect(await ids("cancelation", ["post"])).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5006"]);
    });

    it("two typos from 9 letters, none below 5", async () => {
      expect(await ids("concurency strutcured", ["post"])).toContain("p_01JWQYPV8RRNPMN5REKHSD5006");
      expect(await ids("cocnurrenzy", ["post"])).toContain("p_01JWQYPV8RRNPMN5REKHSD5006"); // 11 letters: a swap and a replaced letter
      expect(await ids("rian", ["post"])).toEqual([]); // "rain" with 2 letters swapped: 4 letters, no typo allowed
      expect(await ids("wrokres", ["post"])).toEqual([]); // 7 letters, 2 typos: too many
    });

    it("prefix match on the last query word only", async () => {
      expect(await ids("structured concur", ["post"])).toEqual(
        expect.arrayContaining(["p_01JWQYPV8RRNPMN5REKHSD5006", "p_01JWQYPV8RRNPMN5REKHSD5007"]),
      );
      expect(await ids("concur structured", ["post"])).toEqual([]);
    });

    it("exact matches rank above typo matches; title matches above body matches", async () => {
      // "worker" is in 5006's title; 5007's title has "Worker pools": both exact — the body-only typo loses
      expect((await ids("structured", ["post"]))[0]).toBe("p_01JWQYPV8RRNPMN5REKHSD5006");
      expect((await ids("pools", ["post"]))[0]).toBe("p_01JWQYPV8RRNPMN5REKHSD5007");
      const r = await ids("limits", ["post"]);
      expect(r.slice(0, 2).sort()).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5002", "p_01JWQYPV8RRNPMN5REKHSD5007"]);
    });

    it("Chinese keeps segmentation + bigrams: 限流 and 网关 find 网关限流策略", async () => {
      expect(await ids("限流", ["post"])).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5008"]);
      expect(await ids("网关 限流", ["post"])).toEqual(["p_01JWQYPV8RRNPMN5REKHSD5008"]);
      expect((await ids("网关", ["post"]))[0]).toBe("p_01JWQYPV8RRNPMN5REKHSD5008"); // title beats body (5004)
    });

    it("similar: common and stop words carry no weight, a minimum score drops weak hits, scores are 0–1", async () => {
      const opts = { match: "any", minScore: 0.3 } as const;
      const weak = await engine.search("agent quota per hour", ["post"], 5, opts);
      expect(weak.hits.map((h) => h.id)).not.toContain("p_01JWQYPV8RRNPMN5REKHSD5002");
      const strong = await engine.search("Raise rate limits proposals agent", ["post"], 5, opts);
      expect(strong.hits[0]?.id).toBe("p_01JWQYPV8RRNPMN5REKHSD5002");
      for (const h of strong.hits) {
        expect(h.score).toBeGreaterThanOrEqual(0.3);
        expect(h.score).toBeLessThanOrEqual(1);
      }
    });
  });
}

contract("embedded", async () => new EmbeddedEngine());

// The all-in-one's engine (docs/design/search-and-translation.md#the-postgresql-engine) on the real PostgreSQL, a database of its own.
const pgUp = await postgresAvailable();
let pgIndex: PostgresTestIndex | undefined;
afterAll(async () => pgIndex?.drop());
contract(
  pgUp ? "postgres" : "postgres (SKIPPED: no PostgreSQL)",
  async () => {
    pgIndex = await postgresTestIndex();
    return pgIndex.engine;
  },
  pgUp ? describe : describe.skip,
);

// Without a server the Meilisearch contract is reported as skipped, test by test, with the
// reason in the name (CI has no Meilisearch; docs/design/tests.md#loud-skips).
const MEILI_URL = process.env.MEILISEARCH_URL;
if (!MEILI_URL)
  console.warn(
    "⚠️  MEILISEARCH_URL is unset: the Meilisearch engine is NOT tested (set MEILISEARCH_URL and MEILISEARCH_API_KEY to run the same contract against a server)",
  );
contract(
  MEILI_URL ? "meilisearch" : "meilisearch (SKIPPED: MEILISEARCH_URL is unset)",
  async () =>
    new MeiliEngine({
      url: MEILI_URL!,
      apiKey: process.env.MEILISEARCH_API_KEY,
      index: `aps-contract-${process.pid}-${Date.now()}`,
    }),
  MEILI_URL ? describe : describe.skip,
);

describe("MeiliEngine errors", () => {
  it("maps an unreachable server to upstream_unavailable", async () => {
    const e = new MeiliEngine({ url: "http://127.0.0.1:9", index: "x" });
    await expect(e.search("a", [], 1)).rejects.toMatchObject({ code: "upstream_unavailable" });
  });
});
