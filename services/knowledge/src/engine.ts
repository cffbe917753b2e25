import MiniSearch, { type Query, type SearchResult as MiniResult } from "minisearch";
import { plainText } from "./markup.js";
import { analyze, isCjk, queryTerms, snippet, STOPWORDS } from "./text.js";
import { termQuery } from "./typos.js";

/** One searchable document: a docs page or a forum post. */
export interface KnowledgeDoc {
  /** `doc-<slug>` or the post id (`p_` + ULID): letters, digits, `-` and `_` only. */
  id: string;
  kind: "doc" | "post";
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

/** The search seam (docs/architecture.md §8): Meilisearch in production, the embedded engine otherwise. */
export interface SearchEngine {
  readonly name: string;
  /** Prepares the engine (index settings). Idempotent. */
  init(): Promise<void>;
  /** Inserts or replaces documents by id; searchable when the promise resolves. */
  upsert(docs: KnowledgeDoc[]): Promise<void>;
  /** Removes documents by id (unknown ids are ignored). */
  remove(ids: string[]): Promise<void>;
  /** Keyword search; every tag in `tags` must match. An empty `q` lists the tagged documents. */
  search(q: string, tags: string[], limit: number, opts?: SearchOptions): Promise<SearchResult>;
  close(): Promise<void>;
}

/** Field boosts: a title word weighs as much as this many body words (issue 18: title matches weigh most). */
const BOOST = { title: 4, body: 1 };
/** Relative weight of a fuzzy / prefix match against an exact one (MiniSearch `weights`). */
const WEIGHTS = { fuzzy: 0.3, prefix: 0.5 };
/** `any`: a term found in more than this share of the documents is common and carries no weight. */
const COMMON_SHARE = 0.25;

/** One ranked candidate: how many query words it holds (`words`), how many of those only with a typo, the score. */
interface Ranked {
  id: string;
  words: number;
  typos: number;
  score: number;
  /** The document's terms that matched (for the snippet's marks). */
  terms: string[];
}

/**
 * The embedded engine of the all-in-one mode (docs/adr/0124): MiniSearch (BM25, radix tree with fuzzy
 * and prefix lookup) over text.ts's analysis (Intl.Segmenter words + CJK bigrams, light stemming) of
 * the plain text (markup.ts). Typo and prefix rules follow Meilisearch's (typos.ts); ranking: words
 * matched, then words matched without a typo, then BM25 with title ×4. Not persisted: the service
 * re-indexes the docs and the forum's posts at start.
 */
export class EmbeddedEngine implements SearchEngine {
  readonly name = "embedded";
  /** Every document as indexed (tags lowercased, body as plain text). */
  private readonly docs = new Map<string, KnowledgeDoc>();
  private readonly mini = new MiniSearch<KnowledgeDoc>({
    fields: ["title", "body"],
    storeFields: [],
    tokenize: (text) => analyze(text),
    processTerm: (t) => t,
    searchOptions: { tokenize: (t) => [t], processTerm: (t) => t, boost: BOOST, weights: WEIGHTS },
  });

  async init(): Promise<void> {}

  async upsert(docs: KnowledgeDoc[]): Promise<void> {
    for (const d of docs) {
      // remove(), not discard(): the stored copy is exactly what was added, and removing it keeps the
      // term statistics exact at once (discard() leaves them until a vacuum, so one query could score
      // differently from the next while a vacuum runs)
      const prev = this.docs.get(d.id);
      if (prev) this.mini.remove(prev);
      const doc = { ...d, body: plainText(d.body), tags: d.tags.map((t) => t.toLowerCase()) };
      this.docs.set(d.id, doc);
      this.mini.add(doc);
    }
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) {
      const prev = this.docs.get(id);
      if (!prev) continue;
      this.docs.delete(id);
      this.mini.remove(prev);
    }
  }

  /** Documents matching `q` (one analysed term or a combination), restricted to `tagged`. */
  private find(q: Query, tagged: (d: KnowledgeDoc) => boolean, combineWith: "AND" | "OR" = "OR"): MiniResult[] {
    return this.mini.search(q, { combineWith, filter: (r) => tagged(this.docs.get(r.id as string)!) });
  }

  async search(q: string, tags: string[], limit: number, opts: SearchOptions = {}): Promise<SearchResult> {
    const want = tags.map((t) => t.toLowerCase());
    const tagged = (d: KnowledgeDoc) => want.every((t) => d.tags.includes(t));
    let terms = queryTerms(q);
    if (opts.match === "any") terms = terms.filter((t) => !STOPWORDS.has(t) && !(isCjk(t) && [...t].length < 2));
    let ranked: Ranked[];
    if (terms.length === 0) {
      if (q.trim() !== "") return { hits: [], total: 0 };
      ranked = [...this.docs.values()]
        .filter(tagged)
        .map((d) => ({ id: d.id, words: 0, typos: 0, score: 0, terms: [] }));
    } else if (opts.match === "any") ranked = this.any(terms, tagged, opts.minScore ?? 0);
    else ranked = this.all(terms, tagged);
    ranked.sort((a, b) => b.words - a.words || a.typos - b.typos || b.score - a.score || (a.id < b.id ? 1 : -1));
    const hits = ranked.slice(0, limit).map((r) => {
      const d = this.docs.get(r.id)!;
      return {
        id: r.id,
        kind: d.kind,
        title: d.title,
        url: d.url,
        snippet: bestSnippet(d, [...new Set([...terms, ...r.terms])]),
        tags: d.tags,
        score: Math.round(r.score * 1000) / 1000,
      };
    });
    return { hits, total: ranked.length };
  }

  /** `all`: documents holding every term (typo/prefix rules of typos.ts), scored by BM25. */
  private all(terms: string[], tagged: (d: KnowledgeDoc) => boolean): Ranked[] {
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
   * `any` (duplicate check): each term weighs its inverse document frequency, 0 for a term in more than
   * `COMMON_SHARE` of the documents; a document's score is the share (0–1) of the query's weight it holds.
   */
  private any(terms: string[], tagged: (d: KnowledgeDoc) => boolean, minScore: number): Ranked[] {
    const n = Math.max(this.docs.size, 1);
    const all = () => true;
    const weighted = terms.map((t) => {
      const found = this.find(termQuery(t, false), all);
      const df = found.length;
      return { t, found, w: df === 0 || df > n * COMMON_SHARE ? 0 : Math.log(1 + n / df) };
    });
    const total = weighted.reduce((s, x) => s + x.w, 0) || 1;
    const acc = new Map<string, Ranked>();
    for (const { found, w } of weighted) {
      if (w === 0) continue;
      for (const r of found) {
        if (!tagged(this.docs.get(r.id as string)!)) continue;
        let a = acc.get(r.id as string);
        if (!a) acc.set(r.id as string, (a = { id: r.id as string, words: 0, typos: 0, score: 0, terms: [] }));
        a.score += w / total;
        a.terms.push(...r.terms);
      }
    }
    // Ranked by score alone: the share of distinctive words already weighs how many matched.
    return [...acc.values()].filter((a) => a.score >= minScore);
  }

  async close(): Promise<void> {}
}

/** The body's snippet when it shows a match, else the title's (marked) when that does. */
function bestSnippet(d: KnowledgeDoc, terms: string[]): string {
  const body = snippet(d.body, terms);
  if (body.includes("**") || terms.length === 0) return body;
  const title = snippet(d.title, terms);
  return title.includes("**") ? title : body;
}
