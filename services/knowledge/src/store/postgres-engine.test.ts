import { postgresAvailable, postgresTestIndex, testPost, type PostgresTestIndex } from "./postgres.fixture.js";
import type { PostgresEngine } from "./postgres-engine.js";
import { lexemeLiteral, tsvectorLiteral } from "./tsvector.js";

/**
 * PostgresEngine's own bookkeeping on the real PostgreSQL (docs/design/search-and-translation.md#the-postgresql-engine): the vocabulary's
 * document frequencies stay equal to a recount from the documents through upserts, edits, removals
 * and two writers at once; lexemes with quotes and backslashes round-trip; an unchanged upsert
 * writes nothing; the position moves only for changes made for an event.
 */
const pgUp = await postgresAvailable();
const d = pgUp ? describe : describe.skip;

const post = testPost;

describe("tsvector texts", () => {
  it("quotes lexemes: single quotes doubled, backslashes doubled", () => {
    expect(lexemeLiteral("o'reilly")).toBe("'o''reilly'");
    expect(lexemeLiteral("a\\b")).toBe("'a\\\\b'");
  });
  it("weights title positions A, numbers positions across title and body, lists each term once", () => {
    const { literal, terms } = tsvectorLiteral(["cache", "proxy"], ["proxy", "cache", "cache"]);
    expect(literal).toBe("'cache':1A,4,5 'proxy':2A,3");
    expect(terms).toEqual(["cache", "proxy"]);
  });
});

d(pgUp ? "PostgresEngine bookkeeping (real PostgreSQL)" : "PostgresEngine bookkeeping (SKIPPED: no PostgreSQL)", () => {
  let index: PostgresTestIndex;
  let engine: PostgresEngine;
  beforeAll(async () => {
    index = await postgresTestIndex();
    engine = index.engine;
    await engine.init();
  });
  afterAll(async () => index?.drop());

  /** Document frequencies recounted from the documents themselves (the independent model). */
  const recount = async () =>
    new Map(
      (
        await index.db.pool.query<{ term: string; n: number }>(
          "SELECT term, count(*)::int AS n FROM knowledge.documents, unnest(tsvector_to_array(tsv)) AS term GROUP BY term",
        )
      ).rows.map((r) => [r.term, r.n]),
    );
  const vocabulary = async () =>
    new Map(
      (await index.db.pool.query<{ term: string; df: number }>("SELECT term, df FROM knowledge.terms")).rows.map(
        (r) => [r.term, r.df],
      ),
    );

  it("keeps df equal to a recount through upserts, edits, removals and two concurrent writers", async () => {
    const second = await index.open(); // another replica's engine on the same schema
    await second.init();
    const words = ["cache", "proxy", "queue", "ballot", "quorum", "outbox", "council", "sagacity", "agenda", "relay"];
    const text = (i: number, salt: number) =>
      Array.from({ length: 12 }, (_, k) => words[(i * 7 + k * (salt + 3)) % words.length]).join(" ");
    await Promise.all(
      [engine, second].map(async (e, w) => {
        for (let i = 0; i < 20; i++) await e.upsert([post(i, `Title ${text(i, w)}`, text(i + 1, w))], `ev-${w}-${i}`);
      }),
    );
    await engine.upsert([post(3, "An edited title", "quorum only")], "ev-edit");
    await second.remove([post(4, "", "").id, post(5, "", "").id], "ev-remove");
    expect(await vocabulary()).toEqual(await recount());
    const state = await engine.state();
    expect(state.docs).toBe(18);
    expect(state.applied).toBe(42);
    expect(state.eventId).toBe("ev-remove");
  });

  it("an unchanged upsert writes nothing; a bulk upsert (no event) leaves the position alone", async () => {
    const before = await engine.state();
    const same = post(3, "An edited title", "quorum only");
    await engine.upsert([same]);
    expect(await engine.state()).toEqual(before);
    await engine.upsert([same], "ev-again");
    expect(await engine.state()).toEqual({ ...before, eventId: "ev-again", applied: before.applied + 1 });
  });

  it("quotes and backslashes in words round-trip and are searchable", async () => {
    const p = post(90, "O'Reilly guide to back\\slash paths", "The o'reilly way: C:\\temp and it''s fine.");
    await engine.upsert([p]);
    expect((await engine.search("o'reilly", ["post"], 5)).hits.map((h) => h.id)).toEqual([p.id]);
    const [hit] = (await engine.search("back\\slash", ["post"], 5)).hits;
    expect(hit?.id).toBe(p.id);
    expect(await vocabulary()).toEqual(await recount());
  });

  it("retag rewrites only the tags (text, terms and search unchanged), records the event; false for an unknown id", async () => {
    const p = {
      ...post(70, "Retagged ballot relay", "The quorum of the relay"),
      tags: ["post", "arch", "agenda", "storage"],
    };
    await engine.upsert([p], "ev-retag-0");
    const row = async () =>
      (
        await index.db.pool.query<{ tags: string[]; tsv: string; h: string }>(
          "SELECT tags, tsv::text AS tsv, h FROM knowledge.documents WHERE id = $1",
          [p.id],
        )
      ).rows[0]!;
    const before = await row();
    const state = await engine.state();
    const seen: string[][] = [];
    const done = await engine.retag(
      p.id,
      (tags) => (seen.push(tags), ["POST", "arch", "adopted", "storage"]),
      "ev-retag-1",
    );
    expect(done).toBe(true);
    expect(seen).toEqual([["post", "arch", "agenda", "storage"]]);
    const after = await row();
    expect(after).toEqual({ ...before, tags: ["post", "arch", "adopted", "storage"] });
    expect(await engine.state()).toEqual({ ...state, eventId: "ev-retag-1", applied: state.applied + 1 });
    expect((await engine.search("relay", ["adopted"], 5)).hits.map((h) => h.id)).toEqual([p.id]);
    expect((await engine.search("relay", ["agenda"], 5)).hits).toEqual([]);
    expect(await vocabulary()).toEqual(await recount());

    // an unknown id, or a retag that answers undefined: nothing changes, the event is not recorded
    const now = await engine.state();
    expect(await engine.retag("p_nope", () => ["post"], "ev-retag-2")).toBe(false);
    expect(await engine.retag(p.id, () => undefined, "ev-retag-3")).toBe(false);
    expect(await engine.state()).toEqual(now);
    expect((await row()).tags).toEqual(["post", "arch", "adopted", "storage"]);
  });

  it("an index of another format is emptied at init", async () => {
    await index.db.pool.query("UPDATE knowledge.index_state SET format = 0");
    const again = await index.open();
    await again.init();
    expect(again.startedFrom).toBe("format");
    expect(again.restored).toBe(false);
    expect((await again.state()).docs).toBe(0);
    expect((await again.search("", ["post"], 5)).total).toBe(0);
    expect((await vocabulary()).size).toBe(0);
  });
});
