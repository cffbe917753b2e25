import type { KnowledgeDoc } from "../engine.js";
import { postgresAvailable, postgresTestIndex, testPost, type PostgresTestIndex } from "./postgres.fixture.js";
import type { PostgresEngine, SearchBounds } from "./postgres-engine.js";

/**
 * A search reads a bounded number of documents whatever its words (docs/design/search-and-translation.md#bounded-candidates): when more
 * documents may match than `exactMatches`, the candidates are the matches among the newest
 * `recentWindow` documents with the tags plus up to `titleCandidates` documents with every word in
 * their title, and `total` is extrapolated from the window; a window that says few match falls back
 * to reading every match. Bounds lowered here (50 / 30 / 10, title reach 1,000) so that 400 posts exercise them; the
 * same queries on an engine with the default bounds read every match (the reference).
 */
const pgUp = await postgresAvailable();
const d = pgUp ? describe : describe.skip;
const BOUNDS: SearchBounds = { exactMatches: 50, recentWindow: 30, titleCandidates: 10, titleReach: 1_000 };
const N = 400;
const idOf = (i: number) => testPost(i, "", "").id;

/**
 * The corpus, ids in creation order 0…399: every body holds `common`; post 5 (old) is titled
 * "Common sharding plan"; `alpha` is in posts 0–239 and `beta` in 235–399 (together in 5);
 * `gamma` in the newest 30 and in every 10th older one; three docs pages hold `common` too.
 */
function corpus(): KnowledgeDoc[] {
  const posts = Array.from({ length: N }, (_, i) => {
    const words = ["common", "filler"];
    if (i < 240) words.push("alpha");
    if (i >= 235) words.push("beta");
    if (i >= N - 30 || i % 10 === 0) words.push("gamma");
    return testPost(i, i === 5 ? "Common sharding plan" : `Post number ${i}`, `${words.join(" ")} text of post ${i}.`);
  });
  const pages = ["a", "b", "c"].map((x): KnowledgeDoc => ({
    id: `doc-${x}`,
    kind: "doc",
    title: `Page ${x}`,
    body: "common words",
    url: `/docs/${x}.md`,
    tags: ["docs"],
  }));
  return [...posts, ...pages];
}

d(pgUp ? "bounded search (real PostgreSQL)" : "bounded search (SKIPPED: no PostgreSQL)", () => {
  let index: PostgresTestIndex;
  let bounded: PostgresEngine;
  let reference: PostgresEngine;
  beforeAll(async () => {
    index = await postgresTestIndex();
    reference = index.engine;
    await reference.init();
    await reference.upsert(corpus());
    bounded = await index.open(BOUNDS);
  });
  afterAll(async () => index?.drop());

  it("a word in every post: the title match outside the window still ranks first; total extrapolated from the window", async () => {
    const all = await reference.search("common", ["post"], 10);
    expect(all.total).toBe(N);
    expect(all.hits[0]?.id).toBe(idOf(5));
    const r = await bounded.search("common", ["post"], 10);
    expect(r.hits[0]?.id).toBe(idOf(5));
    // the window's 30 all match: 30 / 30 × 403 documents in the index
    expect(r.total).toBe(N + 3);
    // the rest of the page comes from the newest 30 posts, not from older matches
    for (const h of r.hits.slice(1)) expect(h.id >= idOf(N - 30)).toBe(true);
  });

  it("a word held by more documents than titleReach looks up no title candidates: the old title match is left out, the page is the window's", async () => {
    // `common` is in 403 documents: at a reach of 403 its titles are looked up, at 402 not
    const at = await index.open({ ...BOUNDS, titleReach: N + 3 });
    expect((await at.search("common", ["post"], 10)).hits[0]?.id).toBe(idOf(5));
    const below = await index.open({ ...BOUNDS, titleReach: N + 2 });
    const r = await below.search("common", ["post"], 10);
    expect(r.hits.map((h) => h.id)).not.toContain(idOf(5));
    for (const h of r.hits) expect(h.id >= idOf(N - 30)).toBe(true);
    expect(r.total).toBe(N + 3);
  });

  it("the window's share stands for the total (an estimate: here the newest all match, older ones one in ten)", async () => {
    const exact = await reference.search("gamma", [], 10);
    expect(exact.total).toBe(30 + 37);
    const r = await bounded.search("gamma", [], 10);
    expect(r.total).toBe(N + 3);
    expect(r.hits.map((h) => h.id)).toEqual(exact.hits.map((h) => h.id));
  });

  it("words common alone but rare together: the empty window sends the query to every match (total exact)", async () => {
    const r = await bounded.search("alpha beta", [], 10);
    expect(r.total).toBe(5);
    expect(r.hits.map((h) => h.id).sort()).toEqual([235, 236, 237, 238, 239].map(idOf));
  });

  it("a rare tag: the window holds none of its documents, so the query reads every match (total exact)", async () => {
    const r = await bounded.search("common", ["docs"], 10);
    expect(r.total).toBe(3);
    expect(r.hits.map((h) => h.id).sort()).toEqual(["doc-a", "doc-b", "doc-c"]);
  });

  it("a window holding every document gives the exact total", async () => {
    const wide = await index.open({ ...BOUNDS, recentWindow: 1_000 });
    const r = await wide.search("gamma", [], 10);
    expect(r.total).toBe(30 + 37);
  });

  it("an empty query lists the newest documents with the tags; total counted up to exactMatches, estimated above", async () => {
    const few = await bounded.search("", ["docs"], 10);
    expect(few.total).toBe(3);
    expect(few.hits.map((h) => h.id)).toEqual(["doc-c", "doc-b", "doc-a"]);
    const many = await bounded.search("", ["post"], 5);
    expect(many.hits.map((h) => h.id)).toEqual([399, 398, 397, 396, 395].map(idOf));
    // the newest 30 documents are all posts: 30 / 30 × 403
    expect(many.total).toBe(N + 3);
    expect((await reference.search("", ["post"], 5)).total).toBe(N);
  });
});
