import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedEngine } from "./engine.js";
import { INDEX_FORMAT } from "./index-files.js";
import { testPost } from "./store/postgres.fixture.js";

/**
 * The embedded engine's durable index (docs/design/search-and-translation.md#resume-and-rebuild), on real files in a temporary folder: a
 * restart restores the snapshot and replays the log (position included), a snapshot of another
 * format is not used, and neither the files nor the index hold post bodies (snippets come from the
 * TextSource, for the page of results only).
 */
const post = testPost;
/** A word found only in bodies, never in titles. */
const SECRET = "zanzibarquux";
const CORPUS = Array.from({ length: 30 }, (_, i) =>
  post(i, `Proposal number ${i} about caching`, `The body of proposal ${i} mentions ${SECRET}${i} and concurrency.`),
);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "aps-knowledge-index-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ids = (r: { hits: { id: string }[] }) => r.hits.map((h) => h.id);
const filesText = () =>
  readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");

describe("EmbeddedEngine durable index", () => {
  it("a retag is logged and replayed, and a snapshot keeps it (docs/design/search-and-translation.md#keeping-the-index-current)", async () => {
    const a = new EmbeddedEngine({ dir });
    await a.init();
    await a.upsert(CORPUS);
    await a.checkpoint();
    const moved = await a.retag(CORPUS[5]!.id, (tags) => [...tags.slice(0, 2), "agenda"], "01RETAG");
    expect(moved).toBe(true);
    expect(ids(await a.search("caching", ["agenda"], 50))).toEqual([CORPUS[5]!.id]);

    // a restart without a new snapshot replays the retag from the log
    const b = new EmbeddedEngine({ dir });
    await b.init();
    expect(b.positionNow()).toEqual({ eventId: "01RETAG", applied: 1 });
    expect(ids(await b.search("caching", ["agenda"], 50))).toEqual([CORPUS[5]!.id]);
    expect(ids(await b.search(`${SECRET}5`, ["open"], 50))).not.toContain(CORPUS[5]!.id);
    await b.close(); // writes a snapshot holding the new tags

    const c = new EmbeddedEngine({ dir });
    await c.init();
    expect(ids(await c.search("caching", ["agenda"], 50))).toEqual([CORPUS[5]!.id]);
    expect(ids(await c.search(`${SECRET}5`, ["agenda"], 50))).toEqual([CORPUS[5]!.id]);
    await c.close();
  });

  it("a restart restores the snapshot and replays the changes logged after it, with their position", async () => {
    const a = new EmbeddedEngine({ dir });
    await a.init();
    expect(a.restored).toBe(false);
    await a.upsert(CORPUS); // bulk load, then a snapshot
    await a.checkpoint();
    // two events after the snapshot; then the process dies (no close(), no new snapshot)
    await a.upsert([post(100, "Structured concurrency for workers", "Task groups and cancellation.")], "01EVENTA");
    await a.upsert([{ ...CORPUS[3]!, tags: ["post", "arch", "adopted"] }], "01EVENTB");
    await a.remove([CORPUS[4]!.id], "01EVENTC");

    const b = new EmbeddedEngine({ dir });
    await b.init();
    expect(b.restored).toBe(true);
    expect(b.startedFrom).toBe("snapshot");
    expect(b.positionNow()).toEqual({ eventId: "01EVENTC", applied: 3 });
    expect(b.size).toBe(CORPUS.length); // 30 + 1 − 1
    expect(ids(await b.search("structured concurrency", [], 5))).toEqual([post(100, "", "").id]);
    expect(ids(await b.search("caching", ["adopted"], 50))).toEqual([CORPUS[3]!.id]);
    expect(ids(await b.search("proposal", [], 50))).not.toContain(CORPUS[4]!.id);
    // typo tolerance survives the round trip (the MiniSearch options are the same)
    expect(ids(await b.search("cancelation", [], 5))).toEqual([post(100, "", "").id]);
    await b.close();

    // close() wrote a snapshot of everything: a third start reads no log record
    const c = new EmbeddedEngine({ dir });
    await c.init();
    expect(c.positionNow()).toEqual({ eventId: "01EVENTC", applied: 3 });
    expect(readdirSync(dir).filter((f) => f.startsWith("log-") && readFileSync(join(dir, f), "utf8") !== "")).toEqual(
      [],
    );
    expect(c.size).toBe(CORPUS.length);
  });

  it("a snapshot of another format version is not used: the engine starts empty and says why", async () => {
    const a = new EmbeddedEngine({ dir });
    await a.init();
    await a.upsert(CORPUS);
    await a.close();
    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as { format: number };
    expect(meta.format).toBe(INDEX_FORMAT);
    writeFileSync(join(dir, "meta.json"), JSON.stringify({ ...meta, format: INDEX_FORMAT - 1 }));

    const b = new EmbeddedEngine({ dir });
    await b.init();
    expect(b.restored).toBe(false);
    expect(b.startedFrom).toBe("format");
    expect(b.size).toBe(0);
    expect(readdirSync(dir)).toEqual([]); // the old files are gone; the caller rebuilds
  });

  it("holds no body: neither the files nor the index contain body text; snippets come from the TextSource for the page only", async () => {
    const asked: string[][] = [];
    const bodies = new Map(CORPUS.map((d) => [d.id, d.body]));
    const texts = async (want: string[]) => {
      asked.push(want);
      return new Map(want.map((id) => [id, bodies.get(id)!]));
    };
    const a = new EmbeddedEngine({ dir, texts });
    await a.init();
    await a.upsert(CORPUS);
    await a.checkpoint();
    expect(filesText()).toContain("Proposal number 7 about caching"); // titles are stored
    // the index holds terms (each word once), never the text: no sentence of any body is in the files or the engine
    for (const d of CORPUS) expect(filesText()).not.toContain(d.body);
    expect(filesText()).not.toContain("The body of proposal");
    expect(JSON.stringify(a)).not.toContain("The body of proposal");

    const r = await a.search(`${SECRET}7`, [], 3);
    expect(ids(r)[0]).toBe(CORPUS[7]!.id); // exact first; "…17", "…27" follow as prefix matches
    expect(r.hits[0]!.snippet).toContain(`**${SECRET}7**`);
    const page = await a.search("caching", [], 5);
    expect(page.total).toBe(CORPUS.length);
    expect(asked.at(-1)).toEqual(ids(page)); // the 5 of the page, not the 30 that matched
    expect(asked.at(-1)).toHaveLength(5);
  });
});
