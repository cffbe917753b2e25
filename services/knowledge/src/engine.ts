import { createHash } from "node:crypto";
import MiniSearch, { type Options, type Query, type SearchResult as MiniResult } from "minisearch";
import { IndexFiles, type IndexPosition, type LogRecord } from "./index-files.js";
import { plainText } from "./markup.js";
import { analyze, bestSnippet, isCjk, queryTerms, STOPWORDS } from "./text.js";
import { termQuery } from "./typos.js";

/** One searchable document: a docs page, a forum post or a comment. */
export interface KnowledgeDoc {
  /** `doc-<slug>`, the post id (`p_` + ULID) or the comment id (`c_` + ULID): letters, digits, `-` and `_` only. */
  id: string;
  kind: "doc" | "post" | "comment";
  title: string;
  body: string;
  url: string;
  /** Lowercase tags: `docs`, or `post` + `arch`|`free` + the status. */
  tags: string[];
}

/** One search result. */
export interface SearchHit {
  id: string;
  kind: string;
  title: string;
  url: string;
  /** Text around the match with the matched terms marked `**term**`. */
  snippet: string;
  tags: string[];
  score: number;
}

/** Search results: the first `limit` hits and how many matched. */
export interface SearchResult {
  hits: SearchHit[];
  total: number;
}

/**
 * Bodies by id, for the snippets of one page of results (docs/design/search-and-translation.md#resume-and-rebuild): the engine keeps no body in
 * memory. Ids without a text are left out of the map (the snippet then comes from the title).
 */
export type TextSource = (ids: string[]) => Promise<Map<string, string>>;

/** How the words of a query combine. */
export interface SearchOptions {
  /** `all` (default): every word must match; `any`: documents matching enough of them, ranked (duplicate check). */
  match?: "all" | "any";
  /**
   * `any` only: hits scoring below this are dropped. Scores of `any` are 0–1 on both engines
   * (embedded: the IDF-weighted share of the query's words the document holds; Meilisearch: `_rankingScore`).
   */
  minScore?: number;
}

/** The search seam (docs/design/search-and-translation.md#search-engines): Meilisearch in production, PostgreSQL in the all-in-one (docs/design/search-and-translation.md#the-postgresql-engine), MiniSearch without a database. */
export interface SearchEngine {
  readonly name: string;
  /** Prepares the engine (index settings). Idempotent. */
  init(): Promise<void>;
  /**
   * Inserts or replaces documents by id; searchable when the promise resolves. `eventId`: the event
   * that caused the change (a durable engine logs the change with it before resolving, docs/design/search-and-translation.md#resume-and-rebuild);
   * without it, a bulk load that the caller ends with `checkpoint()`.
   */
  upsert(docs: KnowledgeDoc[], eventId?: string): Promise<void>;
  /** Removes documents by id (unknown ids are ignored); `eventId` as in `upsert`. */
  remove(ids: string[], eventId?: string): Promise<void>;
  /**
   * Durable engines only: true when `init()` restored the index from disk (snapshot + log), so the
   * forum need not be read again (docs/design/search-and-translation.md#resume-and-rebuild). Undefined or false: the caller re-indexes.
   */
  readonly restored?: boolean;
  /** Durable engines only: writes a snapshot of everything applied so far (after a bulk load). */
  checkpoint?(): Promise<void>;
  /**
   * Optional: replaces the tags of indexed document `id` with `retag(tags)` (its current tags,
   * lowercase), leaving its text and the index's term statistics as they are — a post's status
   * change without reading and analysing the post again (docs/design/search-and-translation.md#keeping-the-index-current). Resolves false, changing
   * nothing, when `id` is not in the index or `retag` answers undefined (the caller then indexes
   * the document in full). `eventId` as in `upsert`.
   */
  retag?(id: string, retag: (tags: string[]) => string[] | undefined, eventId?: string): Promise<boolean>;
  /** Where the texts of the page of results come from (snippets are built on demand, docs/design/search-and-translation.md#resume-and-rebuild). */
  useTexts?(source: TextSource): void;
  /** Keyword search; every tag in `tags` must match. An empty `q` lists the tagged documents. */
  search(q: string, tags: string[], limit: number, opts?: SearchOptions): Promise<SearchResult>;
  close(): Promise<void>;
}

/** A document as the engines index it: the plain body (markup.ts), lowercase tags, and `h`. */
export interface PlainDocument extends KnowledgeDoc {
  /** Digest of the indexed title + plain body (16 characters): an upsert of the same text can be recognised. */
  h: string;
}

/** `d` with its body as plain text (markup.ts), its tags lowercase and the digest of its indexed text. */
export function plainDocument(d: KnowledgeDoc): PlainDocument {
  const body = plainText(d.body);
  const h = createHash("sha1").update(d.title).update("\0").update(body).digest("base64url").slice(0, 16);
  return { id: d.id, kind: d.kind, title: d.title, url: d.url, tags: d.tags.map((t) => t.toLowerCase()), body, h };
}

/** Field boosts: a title word weighs as much as this many body words (title matches weigh most). */
const BOOST = { title: 4, body: 1 };
/** Relative weight of a fuzzy / prefix match against an exact one (MiniSearch `weights`). */
const WEIGHTS = { fuzzy: 0.3, prefix: 0.5 };
/** `any`: a term found in more than this share of the documents is common and carries no weight. */
const COMMON_SHARE = 0.25;
/** `any`: how many of the query's rarest words are looked up (Meilisearch reads a query's first 10 words). */
const SIMILAR_TERMS = 10;
/** Log records after which the durable engine writes a new snapshot (docs/design/search-and-translation.md#resume-and-rebuild). */
const SNAPSHOT_EVERY = 2_000;

/** One ranked candidate: how many query words it holds (`words`), how many of those only with a typo, the score. */
interface Ranked {
  id: string;
  words: number;
  typos: number;
  score: number;
  /** The document's terms that matched (for the snippet's marks). */
  terms: string[];
}

/** What the index stores per document (MiniSearch `storeFields`): no body, only a digest of the indexed text. */
interface Stored {
  kind: string;
  title: string;
  url: string;
  tags: string[];
  /** Digest of the indexed title + plain body: an upsert of the same text removes the old entry exactly. */
  h: string;
}

/** A document as MiniSearch indexes it. */
type Indexed = Stored & { id: string; body: string };

const MINI_OPTIONS: Options<Indexed> = {
  fields: ["title", "body"],
  storeFields: ["kind", "title", "url", "tags", "h"],
  tokenize: (text) => analyze(text),
  processTerm: (t) => t,
  searchOptions: { tokenize: (t) => [t], processTerm: (t) => t, boost: BOOST, weights: WEIGHTS },
};

/** What the embedded engine is built with. */
export interface EmbeddedOptions {
  /**
   * Folder of the durable index (snapshot + append log, docs/design/search-and-translation.md#resume-and-rebuild; `KNOWLEDGE_INDEX_DIR`).
   * Unset: in memory only, rebuilt at every start.
   */
  dir?: string | undefined;
  /** Bodies for snippets; default (and until `useTexts`): plain bodies kept in memory, for tests and tools. */
  texts?: TextSource;
  /** Log records between two snapshots (default 2000). */
  snapshotEvery?: number;
}

/**
 * The in-memory engine (docs/design/search-and-translation.md), for a knowledge service without a database (the all-in-one uses
 * PostgresEngine, docs/design/search-and-translation.md#the-postgresql-engine): MiniSearch (BM25, radix tree with
 * fuzzy and prefix lookup) over text.ts's analysis (Intl.Segmenter words + CJK bigrams, light stemming)
 * of the plain text (markup.ts). Typo and prefix rules follow Meilisearch's (typos.ts); ranking: words
 * matched, then words matched without a typo, then BM25 with title ×4. The index stores kind, title,
 * url and tags per document, never the body: snippets are built from the `TextSource` for the page
 * of results only. With `dir`, the index is durable: `init()` loads the last snapshot and replays the
 * append log; every change made with an `eventId` is logged before `upsert`/`remove` resolve.
 */
export class EmbeddedEngine implements SearchEngine {
  readonly name = "embedded";
  private mini = new MiniSearch<Indexed>(MINI_OPTIONS);
  private readonly files: IndexFiles | undefined;
  /** Plain bodies, only while no TextSource was given (tests, tools). */
  private memory: Map<string, string> | undefined;
  private texts: TextSource;
  private position: IndexPosition = { eventId: "", applied: 0 };
  private readonly snapshotEvery: number;
  /** Changes not covered by a snapshot or a log record (bulk loads). */
  private unsaved = false;
  private saving: Promise<void> = Promise.resolve();
  /** A snapshot of this index is on disk. */
  private saved = false;
  restored = false;
  /** How `init()` went: restored, or why not (`empty`, `format`, `broken`, `memory` without a folder). */
  startedFrom: "snapshot" | "empty" | "format" | "broken" | "memory" = "memory";

  constructor(opts: EmbeddedOptions = {}) {
    this.files = opts.dir ? new IndexFiles(opts.dir) : undefined;
    this.snapshotEvery = opts.snapshotEvery ?? SNAPSHOT_EVERY;
    if (opts.texts) this.texts = opts.texts;
    else {
      const memory = (this.memory = new Map());
      this.texts = async (ids) => new Map(ids.flatMap((id) => (memory.has(id) ? [[id, memory.get(id)!]] : [])));
    }
  }

  /** Loads the durable index when there is a usable one (a snapshot of another INDEX_FORMAT is dropped). */
  async init(): Promise<void> {
    if (!this.files) return;
    const found = this.files.load();
    if ("reason" in found) {
      this.startedFrom = found.reason;
      this.files.clear();
      return;
    }
    this.mini = MiniSearch.loadJSON<Indexed>(found.json, MINI_OPTIONS);
    this.position = found.position;
    for (const rec of found.log) this.replay(rec);
    this.restored = this.saved = true;
    this.startedFrom = "snapshot";
  }

  useTexts(source: TextSource): void {
    this.texts = source;
    this.memory = undefined;
  }

  /** Where the index stands: the last applied event. */
  positionNow(): IndexPosition {
    return { ...this.position };
  }

  /** Documents in the index. */
  get size(): number {
    return this.mini.documentCount;
  }

  /** Bytes of the durable index on disk (0 without a folder). */
  sizeOnDisk(): number {
    return this.files?.sizeOnDisk() ?? 0;
  }

  private replay(rec: LogRecord): void {
    if (rec.op === "upsert") for (const d of rec.docs as KnowledgeDoc[]) this.apply(d);
    else if (rec.op === "retag") this.setTags(rec.id, rec.tags);
    else for (const id of rec.ids) this.drop(id);
    this.position = { eventId: rec.eventId, applied: this.position.applied + 1 };
  }

  /**
   * Indexes one document; an older entry with the same text is removed exactly, one with another text
   * discarded. Returns false when the document was already indexed exactly so (same text and fields).
   */
  private apply(d: KnowledgeDoc): boolean {
    const doc: Indexed = plainDocument(d);
    let changed = true;
    if (this.mini.has(d.id)) {
      const prev = this.mini.getStoredFields(d.id) as Stored | undefined;
      changed =
        !prev ||
        prev.h !== doc.h ||
        prev.kind !== doc.kind ||
        prev.url !== doc.url ||
        prev.tags.join() !== doc.tags.join();
      // remove() with the very text that was indexed keeps term statistics exact at once; another
      // text (a docs page that changed between versions) is discarded (MiniSearch vacuums it later)
      if (prev?.h === doc.h) this.mini.remove(doc);
      else this.mini.discard(d.id);
    }
    this.mini.add(doc);
    this.memory?.set(d.id, d.body);
    return changed;
  }

  private drop(id: string): boolean {
    if (!this.mini.has(id)) return false;
    this.mini.discard(id);
    this.memory?.delete(id);
    return true;
  }

  async upsert(docs: KnowledgeDoc[], eventId?: string): Promise<void> {
    let changed = false;
    for (const d of docs) changed = this.apply(d) || changed;
    this.record({ op: "upsert", docs, eventId: eventId ?? "" }, eventId, changed);
  }

  /**
   * See SearchEngine.retag: the document's stored tags (what the tag filter reads) are replaced in
   * place; its indexed text is not touched. Logged as a `retag` record (docs/design/search-and-translation.md#keeping-the-index-current).
   */
  async retag(id: string, retag: (tags: string[]) => string[] | undefined, eventId?: string): Promise<boolean> {
    const prev = this.mini.getStoredFields(id) as Stored | undefined;
    const tags = prev ? retag([...prev.tags])?.map((t) => t.toLowerCase()) : undefined;
    if (!prev || !tags) return false;
    const changed = tags.join(" ") !== prev.tags.join(" ");
    if (changed) this.setTags(id, tags);
    this.record({ op: "retag", id, tags, eventId: eventId ?? "" }, eventId, changed);
    return true;
  }

  /**
   * Replaces the stored tags of `id` (no-op when absent). MiniSearch hands out its stored-fields
   * object itself; the tag filter and the snapshot read it from there.
   */
  private setTags(id: string, tags: string[]): void {
    const stored = this.mini.getStoredFields(id) as Stored | undefined;
    if (stored) stored.tags = tags;
  }

  async remove(ids: string[], eventId?: string): Promise<void> {
    let changed = false;
    for (const id of ids) changed = this.drop(id) || changed;
    this.record({ op: "remove", ids, eventId: eventId ?? "" }, eventId, changed);
  }

  /** Logs a change made for an event (before the caller acknowledges it); a bulk change only marks the index unsaved. */
  private record(rec: LogRecord, eventId: string | undefined, changed: boolean): void {
    if (!this.files) return;
    if (eventId === undefined) {
      this.unsaved ||= changed;
      return;
    }
    this.files.append(rec);
    this.position = { eventId, applied: this.position.applied + 1 };
    if (this.files.logged >= this.snapshotEvery) void this.checkpoint().catch(() => undefined);
  }

  /** Writes a snapshot now (one at a time); a no-op without a folder or when nothing changed since the last one. */
  async checkpoint(): Promise<void> {
    const files = this.files;
    if (!files) return;
    this.saving = this.saving.then(async () => {
      if (!this.unsaved && files.logged === 0 && this.saved) return;
      // serialised and the log generation switched in one synchronous step: no change falls between them
      const json = JSON.stringify(this.mini);
      const position = this.positionNow();
      this.unsaved = false;
      this.saved = true;
      await files.snapshot(json, position);
    });
    return this.saving;
  }

  /** Documents matching `q` (one analysed term or a combination), restricted to `tagged`. */
  private find(q: Query, tagged: (tags: string[]) => boolean, combineWith: "AND" | "OR" = "OR"): MiniResult[] {
    return this.mini.search(q, { combineWith, filter: (r) => tagged(r.tags as string[]) });
  }

  async search(q: string, tags: string[], limit: number, opts: SearchOptions = {}): Promise<SearchResult> {
    const want = tags.map((t) => t.toLowerCase());
    const tagged = (have: string[]) => want.every((t) => have.includes(t));
    let terms = queryTerms(q);
    if (opts.match === "any") terms = terms.filter((t) => !STOPWORDS.has(t) && !(isCjk(t) && [...t].length < 2));
    let ranked: Ranked[];
    if (terms.length === 0) {
      if (q.trim() !== "") return { hits: [], total: 0 };
      ranked = this.find(MiniSearch.wildcard, tagged).map((r) => ({
        id: r.id as string,
        words: 0,
        typos: 0,
        score: 0,
        terms: [],
      }));
    } else if (opts.match === "any") ranked = this.any(terms, tagged, opts.minScore ?? 0);
    else ranked = this.all(terms, tagged);
    ranked.sort((a, b) => b.words - a.words || a.typos - b.typos || b.score - a.score || (a.id < b.id ? 1 : -1));
    const page = ranked.slice(0, limit);
    const texts = page.length > 0 ? await this.texts(page.map((r) => r.id)) : new Map<string, string>();
    const hits = page.map((r) => {
      const d = this.mini.getStoredFields(r.id) as unknown as Stored;
      const body = texts.get(r.id);
      return {
        id: r.id,
        kind: d.kind,
        title: d.title,
        url: d.url,
        snippet: bestSnippet(d.title, body === undefined ? "" : plainText(body), [...new Set([...terms, ...r.terms])]),
        tags: d.tags,
        score: Math.round(r.score * 1000) / 1000,
      };
    });
    return { hits, total: ranked.length };
  }

  /** `all`: documents holding every term (typo/prefix rules of typos.ts), scored by BM25. */
  private all(terms: string[], tagged: (tags: string[]) => boolean): Ranked[] {
    const last = terms.length - 1;
    const query: Query = { combineWith: "AND", queries: terms.map((t, i) => termQuery(t, i === last && !isCjk(t))) };
    return this.find(query, tagged).map((r) => ({
      id: r.id as string,
      words: terms.length,
      typos: terms.filter((t, i) => !r.terms.some((m) => m === t || (i === last && m.startsWith(t)) || isCjk(t)))
        .length,
      score: r.score,
      terms: r.terms,
    }));
  }

  /**
   * Documents holding `term` exactly, in O(1): the longer of its title and body posting lists (a lower
   * bound of the true count; MiniSearch has no public document-frequency call, so this reads its
   * `_index` radix tree — minisearch is pinned to 7.x, docs/design/search-and-translation.md#duplicate-check).
   */
  private exactDf(term: string): number {
    const index = (this.mini as unknown as { _index: { get(t: string): Map<number, Map<number, number>> | undefined } })
      ._index;
    let df = 0;
    for (const docs of index.get(term)?.values() ?? []) df = Math.max(df, docs.size);
    return df;
  }

  /**
   * `any` (duplicate check): the query's `SIMILAR_TERMS` rarest words (a word in more than
   * `COMMON_SHARE` of the documents carries no weight and is dropped first) each weigh their inverse
   * document frequency; a document's score is the share (0–1) of that weight it holds. Looking up only
   * the rare words, and a word the index holds exactly without typo expansion, keeps a duplicate
   * check cheap however large the index (docs/design/search-and-translation.md#duplicate-check).
   */
  private any(terms: string[], tagged: (tags: string[]) => boolean, minScore: number): Ranked[] {
    const n = Math.max(this.mini.documentCount, 1);
    const rare = terms
      .map((t, i) => ({ t, i, df: this.exactDf(t) }))
      .filter((x) => x.df <= n * COMMON_SHARE)
      .sort((a, b) => a.df - b.df || a.i - b.i)
      .slice(0, SIMILAR_TERMS);
    const weighted = rare.map(({ t, df: exact }) => {
      // a word the index holds is looked up as it is; only an unknown one (a typo?) with the typo rules
      const q: Query =
        exact > 0 ? { combineWith: "OR", queries: [t], fuzzy: false, prefix: false } : termQuery(t, false);
      const found = this.find(q, () => true);
      const df = found.length;
      return { t, found, w: df === 0 || df > n * COMMON_SHARE ? 0 : Math.log(1 + n / df) };
    });
    const total = weighted.reduce((s, x) => s + x.w, 0) || 1;
    const acc = new Map<string, Ranked>();
    for (const { found, w } of weighted) {
      if (w === 0) continue;
      for (const r of found) {
        if (!tagged(r.tags as string[])) continue;
        let a = acc.get(r.id as string);
        if (!a) acc.set(r.id as string, (a = { id: r.id as string, words: 0, typos: 0, score: 0, terms: [] }));
        a.score += w / total;
        a.terms.push(...r.terms);
      }
    }
    // Ranked by score alone: the share of distinctive words already weighs how many matched.
    return [...acc.values()].filter((a) => a.score >= minScore);
  }

  /** Writes a last snapshot when changes are pending (durable engines). */
  async close(): Promise<void> {
    if (this.files && (this.unsaved || this.files.logged > 0)) await this.checkpoint();
    else await this.saving;
  }
}
