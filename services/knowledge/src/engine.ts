import { bigramsOf, indexTerms, isCjk, queryTerms, snippet, STOPWORDS } from "./text.js";

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

interface Posting {
  title: number;
  body: number;
}

/**
 * The embedded engine of the all-in-one mode: an in-memory inverted index (see text.ts for the
 * analysis). Scoring is term frequency (title ×5, body saturating) weighted by inverse document frequency.
 * Not persisted: the service re-indexes the docs and the forum's posts at start.
 */
export class EmbeddedEngine implements SearchEngine {
  readonly name = "embedded";
  private readonly docs = new Map<string, KnowledgeDoc>();
  private readonly terms = new Map<string, string[]>();
  private readonly index = new Map<string, Map<string, Posting>>();

  async init(): Promise<void> {}

  async upsert(docs: KnowledgeDoc[]): Promise<void> {
    for (const d of docs) {
      this.drop(d.id);
      const doc = { ...d, tags: d.tags.map((t) => t.toLowerCase()) };
      this.docs.set(d.id, doc);
      const title = indexTerms(d.title);
      const body = indexTerms(d.body);
      const all = new Set([...title.keys(), ...body.keys()]);
      for (const t of all) {
        let p = this.index.get(t);
        if (!p) this.index.set(t, (p = new Map<string, Posting>()));
        p.set(d.id, { title: title.get(t) ?? 0, body: body.get(t) ?? 0 });
      }
      this.terms.set(d.id, [...all]);
    }
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) this.drop(id);
  }

  private drop(id: string): void {
    for (const t of this.terms.get(id) ?? []) {
      const p = this.index.get(t);
      p?.delete(id);
      if (p && p.size === 0) this.index.delete(t);
    }
    this.terms.delete(id);
    this.docs.delete(id);
  }

  /** Documents matching one query term with their weighted frequency. */
  private match(term: string): Map<string, number> {
    const out = new Map<string, number>();
    // Title words weigh most; body frequency saturates (BM25-like), so long texts do not win by length.
    const weigh = (p: Posting) => 5 * Math.min(p.title, 2) + (3 * p.body) / (p.body + 2);
    for (const [id, p] of this.index.get(term) ?? []) out.set(id, weigh(p));
    if (isCjk(term) && [...term].length >= 3) {
      // However the segmenter cut the document: every bigram of the word must occur.
      const grams = bigramsOf(term).map((g) => this.index.get(g) ?? new Map<string, Posting>());
      for (const [id, p] of grams[0]!) {
        if (out.has(id)) continue;
        let w = weigh(p);
        let all = true;
        for (const g of grams.slice(1)) {
          const q = g.get(id);
          if (!q) {
            all = false;
            break;
          }
          w = Math.min(w, weigh(q));
        }
        if (all) out.set(id, w);
      }
    }
    return out;
  }

  async search(q: string, tags: string[], limit: number, opts: SearchOptions = {}): Promise<SearchResult> {
    const want = tags.map((t) => t.toLowerCase());
    const tagged = (d: KnowledgeDoc) => want.every((t) => d.tags.includes(t));
    let terms = queryTerms(q);
    if (opts.match === "any") terms = terms.filter((t) => !STOPWORDS.has(t) && !(isCjk(t) && [...t].length < 2));
    const n = Math.max(this.docs.size, 1);
    const scores = new Map<string, { score: number; matched: number }>();
    if (terms.length === 0) {
      if (q.trim() !== "") return { hits: [], total: 0 };
      for (const d of this.docs.values()) if (tagged(d)) scores.set(d.id, { score: 0, matched: 0 });
    } else {
      terms.forEach((t, i) => {
        const m = this.match(t);
        const idf = Math.log(1 + n / Math.max(m.size, 1));
        for (const [id, w] of m) {
          const s = scores.get(id);
          if (s) {
            s.score += idf * w;
            s.matched += 1;
          } else if (i === 0 || opts.match === "any") scores.set(id, { score: idf * w, matched: 1 });
        }
        if (opts.match !== "any") for (const [id, s] of scores) if (s.matched !== i + 1) scores.delete(id);
      });
      const need = opts.match === "any" ? Math.max(1, Math.ceil(terms.length * 0.4)) : terms.length;
      for (const [id, s] of scores) if (s.matched < need || !tagged(this.docs.get(id)!)) scores.delete(id);
    }
    const ranked = [...scores].sort(
      (a, b) => b[1].matched - a[1].matched || b[1].score - a[1].score || (a[0] < b[0] ? 1 : -1),
    );
    const hits = ranked.slice(0, limit).map(([id, s]) => {
      const d = this.docs.get(id)!;
      return {
        id,
        kind: d.kind,
        title: d.title,
        url: d.url,
        snippet: bestSnippet(d, terms),
        tags: d.tags,
        score: Math.round(s.score * 1000) / 1000,
      };
    });
    return { hits, total: scores.size };
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
