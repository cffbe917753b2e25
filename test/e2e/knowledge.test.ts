import { eventually, httpClient } from "@aps/testkit";
import { grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Knowledge search over HTTP (docs/design/search-and-translation.md#search-engines): a new post is findable and a Council status change shows
 * in its tags through the real event path (in-process bus embedded, NATS in `real`) — waited for
 * as a condition with a generous ceiling (INDEX_CEILING_MS; docs/reference/search.md promises no
 * figure) and the time it took printed — the docs are found with tags=docs, /posts/similar finds a
 * near-duplicate, validation.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

type Agent = JoinedAgent;
/** Ceiling of every wait for the index to follow an event: generous, so a loaded 2-core machine does not fail it. */
const INDEX_CEILING_MS = 30_000;

describe.each(modes)("knowledge search (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let author: Agent;

  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
    author = await joinAgent(sys, "author");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const search = (qs: string) => req("GET", `/knowledge/search?${qs}`);
  /** Polls `check` every 50 ms for at most `ms`; returns the time it took (reported, not asserted). */
  const within = (ms: number, check: () => Promise<void>): Promise<number> => eventually(check, ms, 50);

  it("a new post becomes findable, by Chinese words and with its tags", async () => {
    const id = await propose(author, {
      title: "建议为知识库增加中文分词搜索",
      body: "Search should segment Chinese text into words.",
    });
    const took = await within(INDEX_CEILING_MS, async () => {
      const r = await search(`q=${encodeURIComponent("分词")}&tags=post,arch,open`);
      expect(r.status).toBe(200);
      expect(r.body.hits.map((h: { id: string }) => h.id)).toContain(id);
    });
    console.log(`[knowledge ${mode}] a new post findable ${took} ms after its 201`);
    const r = await search(`q=${encodeURIComponent("知识库")}`);
    const hit = r.body.hits.find((h: { id: string }) => h.id === id);
    expect(hit).toMatchObject({
      kind: "post",
      title: "建议为知识库增加中文分词搜索",
      url: `/v1/posts/${id}`,
      tags: ["post", "arch", "open"],
    });
    expect(hit.snippet).toContain("**");
    expect(r.body).toMatchObject({ query: "知识库", tags: [] });
    expect(r.body.total).toBeGreaterThanOrEqual(1);
    expect(r.headers.get("x-skill-version")).toBe(String((await req("GET", "/skill-version")).body.version));
  });

  it("a Council status change shows up in the post's tags", async () => {
    // Three seats, so the nominator's approval alone does not close the case.
    const seats: Agent[] = [];
    for (const n of ["c1", "c2", "c3"]) {
      const c = await joinAgent(sys, n);
      await grantSeat(sys, c, "councillor");
      seats.push(c);
    }
    const councillor = seats[0]!;
    const id = await propose(author, {
      title: "Shard the vote ledger by region",
      body: "Regional shards for the ledger of votes.",
    });
    await within(INDEX_CEILING_MS, async () => {
      expect((await search("q=ledger&tags=open")).body.hits.map((h: { id: string }) => h.id)).toContain(id);
    });
    expect((await req("POST", `/posts/${id}/nominate`, { key: councillor.apiKey })).status).toBe(200);
    await within(INDEX_CEILING_MS, async () => {
      const r = await search("q=ledger&tags=post,review");
      expect(r.body.hits.map((h: { id: string }) => h.id)).toEqual([id]);
    });
    expect((await search("q=ledger&tags=post,open")).body.hits).toEqual([]);
    // The second approval of three seats adopts it.
    expect(
      (await req("POST", `/posts/${id}/council`, { key: seats[1]!.apiKey, body: { vote: "approve", reason: "yes" } }))
        .status,
    ).toBe(200);
    await within(INDEX_CEILING_MS, async () => {
      expect((await search("q=ledger&tags=post,adopted")).body.hits.map((h: { id: string }) => h.id)).toEqual([id]);
    });
  });

  it("tags=docs returns the reference pages only", async () => {
    const r = await search("q=council&tags=docs&limit=50");
    expect(r.status).toBe(200);
    expect(r.body.hits.length).toBeGreaterThan(0);
    for (const h of r.body.hits) {
      expect(h.kind).toBe("doc");
      expect(h.tags).toEqual(["docs"]);
      expect((await fetch(new URL(h.url, sys.baseUrl))).status).toBe(200);
    }
    expect(r.body.hits.map((h: { url: string }) => h.url)).toContain("/docs/council.md");
  });

  it("GET /posts/similar finds a near-duplicate title", async () => {
    const id = await propose(author, {
      title: "Add a Redis cache in front of the gateway",
      body: "Cache hot reads of posts in Redis.",
    });
    await within(INDEX_CEILING_MS, async () => {
      const r = await req(
        "GET",
        `/posts/similar?title=${encodeURIComponent("Redis cache for the gateway")}&body=${encodeURIComponent("cache the reads")}`,
      );
      expect(r.status).toBe(200);
      expect(r.body.hits[0]?.id).toBe(id);
    });
    const none = await req("GET", `/posts/similar?title=${encodeURIComponent("zzqx yyqw")}`);
    expect(none.status).toBe(200);
    expect(none.body.hits).toEqual([]);
  });

  it("comments are found on their own (kind comment), follow edits, leave when hidden, and stay out of tags=post and /posts/similar (docs/design/search-and-translation.md#comments-in-search)", async () => {
    const word = `zebracomment${Date.now().toString(36)}`;
    const id = await propose(author, { title: "Cache warm-up after a deploy", body: "Warm the read cache." });
    const commenter = await joinAgent(sys, "commenter");
    const c = await req("POST", `/posts/${id}/comments`, {
      key: commenter.apiKey,
      body: { body: `The ${word} approach warms only hot keys.` },
    });
    expect(c.status).toBe(201);
    const cid = c.body.id as string;
    const hitsFor = async (qs: string) => {
      const r = await search(qs);
      expect(r.status).toBe(200);
      return r.body.hits as { id: string; kind: string; title: string; url: string; tags: string[]; snippet: string }[];
    };
    const took = await within(INDEX_CEILING_MS, async () => {
      expect((await hitsFor(`q=${word}`)).map((h) => h.id)).toEqual([cid]);
    });
    console.log(`[knowledge ${mode}] a new comment findable ${took} ms after its 201`);
    const [hit] = await hitsFor(`q=${word}`);
    expect(hit).toMatchObject({ kind: "comment", title: "", url: `/v1/posts/${id}`, tags: ["comment"] });
    expect(hit!.snippet).toContain(`**${word}**`);
    expect((await hitsFor(`q=${word}&tags=comment`)).map((h) => h.id)).toEqual([cid]);
    expect(await hitsFor(`q=${word}&tags=post`)).toEqual([]);
    const similar = await req("GET", `/posts/similar?title=${encodeURIComponent(`${word} approach`)}`);
    expect(similar.status).toBe(200);
    expect(similar.body.hits.map((h: { id: string }) => h.id)).not.toContain(cid);
    // an edit replaces the indexed text
    const edited = `${word}x`;
    expect(
      (await req("PATCH", `/comments/${cid}`, { key: commenter.apiKey, body: { body: `Now ${edited} instead.` } }))
        .status,
    ).toBe(200);
    await within(INDEX_CEILING_MS, async () => {
      expect((await hitsFor(`q=${edited}`)).map((h) => h.id)).toEqual([cid]);
    });
    // hidden by the owner: it leaves the index; shown again: back
    const hide = await req("POST", `/admin/comments/${cid}/hide`, { key: sys.adminToken, body: { reason: "spam" } });
    expect(hide.status).toBe(200);
    await within(INDEX_CEILING_MS, async () => {
      expect(await hitsFor(`q=${edited}`)).toEqual([]);
    });
    expect((await req("POST", `/admin/comments/${cid}/unhide`, { key: sys.adminToken })).status).toBe(200);
    await within(INDEX_CEILING_MS, async () => {
      expect((await hitsFor(`q=${edited}`)).map((h) => h.id)).toEqual([cid]);
    });
  });

  it("validates q, tags and limit (400 invalid_request)", async () => {
    const bad = [
      "",
      `q=${"a".repeat(201)}`,
      "q=x&limit=0",
      "q=x&limit=51",
      "q=x&limit=abc",
      `q=x&tags=${Array.from({ length: 11 }, (_, i) => `t${i}`).join(",")}`,
      "q=x&tags=a%20b",
      "q=x&q=y",
    ];
    for (const qs of bad) {
      const r = await search(qs);
      expect([qs, r.status, r.body.code]).toEqual([qs, 400, "invalid_request"]);
    }
    expect((await req("GET", "/posts/similar")).status).toBe(400);
    const ok = await search("q=x&limit=50");
    expect(ok.status).toBe(200);
  });
});
