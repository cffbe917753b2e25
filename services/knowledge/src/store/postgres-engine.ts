import { fileURLToPath } from "node:url";
import { LRUCache } from "lru-cache";
import {
  isDatabaseUnavailable,
  migrate,
  withTransaction,
  zeroSeries,
  type Database,
  type Logger,
  type Tx,
} from "@aps/platform";
import { knowledgeCacheLookups } from "../metrics.js";
import {
  plainDocument,
  type KnowledgeDoc,
  type PlainDocument,
  type SearchEngine,
  type SearchHit,
  type SearchOptions,
  type SearchResult,
} from "../engine.js";
import { analyze, bestSnippet, bigramsOf, isCjk, queryTerms, STOPWORDS } from "../text.js";
import { isTypoOf, typosAllowed } from "../typos.js";
import { RESULT_CACHE, ResultCache, type ResultCacheOptions } from "./result-cache.js";
import { lexemeLiteral, lexemesLiteral, orQuery, tsvectorLiteral } from "./tsvector.js";

/** The knowledge schema's migrations (the PostgreSQL engine's index). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/**
 * Version of what the index holds (docs/design/search-and-translation.md#the-postgresql-engine): bump it whenever the analysis (text.ts, markup.ts)
 * or the tsvector layout changes. At start, an index of another version is emptied and rebuilt
 * from the forum.
 */
/** 2: comments are documents too (docs/design/search-and-translation.md#comments-in-search). */
export const PG_INDEX_FORMAT = 2;

/** `ts_rank` weights {D, C, B, A}: title positions are A, body positions D — a title word weighs 4 body words. */
const RANK_WEIGHTS = "{0.25,0.4,0.6,1}";
/** `ts_rank` weights counting body positions only (a title match is scored apart, normalised by the title's length). */
const BODY_WEIGHTS = "{1,0,0,0}";
/** A word in the title weighs this many times a body match (title matches weigh most). */
const TITLE_BOOST = 4;
/** BM25's k1 and b for the title field (the usual defaults), over a typical title of AVG_TITLE_TERMS terms. */
const BM25_K1 = 1.2;
const BM25_B = 0.75;
const AVG_TITLE_TERMS = 8;
/**
 * `all` and `any`: how many candidates, chosen from GIN and inline columns alone, are scored by the
 * full formula (their tsvectors read).
 */
const RERANK = 100;
/**
 * How far a search (`all`) reads (docs/design/search-and-translation.md#bounded-candidates), in documents:
 * - `exactMatches`: a query whose words may match more documents than this (the rarest word's
 *   reach) ranks bounded candidates; up to it, every match is read and `total` is exact;
 * - `recentWindow`: bounded, the newest documents with the asked tags whose matches are candidates;
 * - `titleCandidates`: bounded, at most this many documents holding every word in their title are
 *   candidates too (any of them);
 * - `titleReach`: bounded, the title candidates are looked up only while the rarest word as typed
 *   is held by at most this many documents (GIN reads a word's whole posting list before the first
 *   candidate: ~0.2 ms per thousand documents holding it).
 */
export interface SearchBounds {
  exactMatches: number;
  recentWindow: number;
  titleCandidates: number;
  titleReach: number;
}

/** The bounds of a search (docs/design/search-and-translation.md#bounded-candidates): at a million posts a search of any one word takes ≤ ~60 ms (p95 54 ms). */
export const SEARCH_BOUNDS: SearchBounds = {
  exactMatches: 5_000,
  recentWindow: 1_000,
  titleCandidates: 300,
  titleReach: 100_000,
};
/**
 * The typo-candidate cache (docs/design/search-and-translation.md#typo-candidate-cache): a query word's
 * typo candidates — the vocabulary terms within its typo budget, found by pg_trgm at a low
 * similarity threshold, the costliest step of a search — are kept per word for `ttlMs` and reused;
 * their document frequencies are read fresh at every search. `now` (ms) is the clock (tests move it).
 */
export interface TypoCacheOptions {
  /** Words kept at most (least recently used dropped first). */
  maxWords: number;
  /** How long a word's candidates are reused, ms: a term new to the vocabulary is a typo form of a cached word within this. */
  ttlMs: number;
  now?: () => number;
}

/** The cache's defaults: 10,000 words (≈ 1 MiB at 50 candidates), 60 s. */
export const TYPO_CACHE: TypoCacheOptions = { maxWords: 10_000, ttlMs: 60_000 };

/** Relative weight of a word matched only through a typo (as the MiniSearch engine's `fuzzy` weight, docs/design/search-and-translation.md#query-rules). */
const TYPO_WEIGHT = 0.3;
/** At most this many vocabulary terms stand for one query word's prefix, or for its typos: the most frequent ones. */
const EXPANSIONS = 50;
/** `any`: a term found in more than this share of the documents is common and carries no weight (docs/design/search-and-translation.md#duplicate-check). */
const COMMON_SHARE = 0.25;
/** `any`: how many of the query's rarest words are looked up at most (Meilisearch reads a query's first 10 words). */
const SIMILAR_TERMS = 10;
/**
 * `any`: the posting-list entries a duplicate check reads to find its candidates — rarer words
 * first, beyond SIMILAR_MIN_TERMS only while they fit — so its cost does not grow with the forum
 * (docs/design/search-and-translation.md#the-postgresql-engine); the other words are checked on the best candidates only.
 */
const SIMILAR_POSTINGS = 1_000;
/** `any`: how many candidates are scored in full (their tsvectors read); the answer holds at most 50 hits. */
const SIMILAR_RERANK = 100;
/** `any`: words whose posting lists are read whatever the budget (one alone would make every candidate tie). */
const SIMILAR_MIN_TERMS = 2;
/** Transaction-level advisory lock serialising index writes (one writer at a time per schema, whatever the replica). */
const WRITE_LOCK = "aps-knowledge-index-write";

/** A document ready to be written: plain body, its tsvector literal and its distinct terms. */
interface Prepared extends PlainDocument {
  tsv: string;
  terms: string[];
  /** Terms in the title (BM25's field length). */
  titleTerms: number;
  /** The title's distinct terms as a tsvector text (no positions), kept inline for cheap title checks. */
  titleTsv: string;
}

/** The vocabulary forms one query word stands for. */
interface Forms {
  word: string;
  /** Forms matched without a typo: the word itself and, for the last word, the terms it prefixes. */
  exact: string[];
  /** Terms within the word's typo budget (typos.ts `isTypoOf`). */
  fuzzy: string[];
  /** CJK: every bigram of the word must match instead (the segmenter may have cut the document elsewhere). */
  bigrams: string[];
  /** Documents holding the word: its exact form's count, else the sum of its typo forms' (0: none). */
  df: number;
  /**
   * At most this many documents match the word through any of its forms: the sum of their
   * document frequencies (for a CJK word's bigrams, the rarest bigram's).
   */
  reach: number;
}

/** Where the index stands (table `index_state`). */
export interface PgIndexState {
  format: number;
  /** A full build finished: a restart need not read the forum. */
  complete: boolean;
  /** The last event applied, "" before the first. */
  eventId: string;
  /** Events applied over the index's life. */
  applied: number;
  /** Documents in the index. */
  docs: number;
}

/**
 * The search engine of the all-in-one (docs/design/search-and-translation.md#the-postgresql-engine): PostgreSQL's own full-text index in the
 * service's schema — a `tsvector` per document built from text.ts's analysis (Intl.Segmenter words,
 * CJK unigrams + bigrams, plural stemming) with a GIN index, and the vocabulary with its document
 * frequencies in `terms`, trigram-indexed by pg_trgm for typo candidates. Nothing is loaded at
 * start and memory does not grow with the forum: every query reads the index from PostgreSQL, and
 * snippets are cut from the stored plain text of the page of results only.
 *
 * Rules (shared with the MiniSearch engine, docs/design/search-and-translation.md#query-rules): Meilisearch's typo budget (typos.ts),
 * prefix on the last word, `all` = every word; ranked by words matched without a typo, then Σ IDF ×
 * `ts_rank` (title ×4; a typo-only match × 0.3). `any` (duplicate check, docs/design/search-and-translation.md#duplicate-check): the 10
 * rarest non-common words weigh their IDF, and a document's score is the weighted share it holds.
 * Every change is one transaction (with the event that caused it, when given), serialised by an
 * advisory lock; `upsert` of an unchanged document writes nothing.
 */
export class PostgresEngine implements SearchEngine {
  readonly name = "postgres";
  restored = false;
  /** How `init()` went: `restored`, or why the index must be rebuilt (`empty`, `format`, `incomplete`). */
  startedFrom: "restored" | "empty" | "format" | "incomplete" = "empty";

  /** `boundedSql` of these bounds. */
  private readonly boundedSql: string;

  /** Typo candidates by query word, with when they were read (TypoCacheOptions). */
  private readonly typoCache: LRUCache<string, { terms: string[]; at: number }>;
  private readonly typos: TypoCacheOptions;
  private readonly now: () => number;
  /** Answers of `all` searches by normalised query (docs/design/search-and-translation.md#result-cache). */
  private readonly results: ResultCache;

  /**
   * `bounds`: how far a search reads (SEARCH_BOUNDS; tests lower them); `caches`: the
   * typo-candidate cache (TYPO_CACHE) and the result cache (RESULT_CACHE).
   */
  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly bounds: SearchBounds = SEARCH_BOUNDS,
    caches: { typos?: TypoCacheOptions; results?: ResultCacheOptions } = {},
  ) {
    this.boundedSql = boundedSql(bounds);
    this.typos = caches.typos ?? TYPO_CACHE;
    this.typoCache = new LRUCache({ max: Math.max(1, this.typos.maxWords) });
    this.now = this.typos.now ?? Date.now;
    this.results = new ResultCache(caches.results ?? RESULT_CACHE);
    zeroSeries(knowledgeCacheLookups, { cache: ["search_results", "typo_candidates"], result: ["hit", "miss"] });
  }

  /** The fresh cached typo candidates of each of `words` that has them. */
  private cachedTypos(words: string[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    const now = this.now();
    for (const w of words) {
      const hit = this.typoCache.get(w);
      if (hit && now - hit.at < this.typos.ttlMs) out.set(w, hit.terms);
    }
    return out;
  }

  /**
   * The typo forms of each Latin word with a typo budget, the `EXPANSIONS` most frequent: from the
   * cache (`cached`, cachedTypos) with their document frequencies from `known` when the caller
   * looked them up, else read here; the other words' by the trigram query, then cached. A cached
   * term no document holds any more is left out.
   */
  private async typoForms(
    c: Tx,
    words: string[],
    cached = this.cachedTypos(words),
    known?: Map<string, number>,
  ): Promise<Map<string, { term: string; df: number }[]>> {
    const out = new Map<string, { term: string; df: number }[]>();
    const terms = [...cached.values()].flat();
    const df = known ?? (terms.length > 0 ? (await lookup(c, terms)).df : new Map<string, number>());
    for (const [w, list] of cached) {
      const forms = list.flatMap((term) => (df.has(term) ? [{ term, df: df.get(term)! }] : []));
      if (forms.length > 0) out.set(w, forms);
    }
    const read = await fuzzyForms(
      c,
      words.filter((w) => !cached.has(w)),
    );
    if (cached.size > 0) knowledgeCacheLookups.inc({ cache: "typo_candidates", result: "hit" }, cached.size);
    if (read.size > 0) knowledgeCacheLookups.inc({ cache: "typo_candidates", result: "miss" }, read.size);
    const at = this.now();
    for (const [w, forms] of read) {
      this.typoCache.set(w, { terms: forms.map((f) => f.term), at });
      if (forms.length > 0) out.set(w, forms);
    }
    for (const [w, list] of out) out.set(w, list.sort((a, b) => b.df - a.df).slice(0, EXPANSIONS));
    return out;
  }

  /** Applies the schema's migrations and reads where the index stands; an index of another format is emptied. */
  async init(): Promise<void> {
    await migrate(this.db, MIGRATIONS_DIR, this.log);
    await this.db.pool.query("INSERT INTO index_state (format) VALUES ($1) ON CONFLICT DO NOTHING", [PG_INDEX_FORMAT]);
    const s = await this.state();
    if (s.format !== PG_INDEX_FORMAT) {
      await withTransaction(this.db.pool, async (tx) => {
        await this.lock(tx);
        await tx.query("TRUNCATE documents, terms");
        await tx.query("UPDATE index_state SET format = $1, complete = false, docs = 0", [PG_INDEX_FORMAT]);
      });
      this.startedFrom = "format";
    } else if (s.complete) this.startedFrom = "restored";
    else this.startedFrom = s.docs > 0 ? "incomplete" : "empty";
    this.restored = this.startedFrom === "restored";
  }

  /** Where the index stands (format, completeness, last event, counts). */
  async state(): Promise<PgIndexState> {
    const r = await this.db.pool.query<{
      format: number;
      complete: boolean;
      event_id: string;
      applied: string;
      docs: number;
    }>("SELECT format, complete, event_id, applied, docs FROM index_state");
    const row = r.rows[0];
    if (!row) return { format: 0, complete: false, eventId: "", applied: 0, docs: 0 };
    return {
      format: row.format,
      complete: row.complete,
      eventId: row.event_id,
      applied: Number(row.applied),
      docs: row.docs,
    };
  }

  /** Bytes the index takes in PostgreSQL: tables, TOAST and indexes. */
  async sizeOnDisk(): Promise<number> {
    const r = await this.db.pool.query<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname IN ('documents', 'terms', 'index_state')`,
      [this.db.schema],
    );
    return Number(r.rows[0]?.bytes ?? 0);
  }

  /** Marks the index complete (after a full build): a restart then resumes without reading the forum. */
  async checkpoint(): Promise<void> {
    await this.db.pool.query("UPDATE index_state SET complete = true WHERE NOT complete");
  }

  private async lock(tx: Tx): Promise<void> {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`${WRITE_LOCK}:${this.db.schema}`]);
  }

  async upsert(docs: KnowledgeDoc[], eventId?: string): Promise<void> {
    const byId = new Map(docs.map((d) => [d.id, prepare(d)]));
    if (byId.size === 0 && eventId === undefined) return;
    const ids = [...byId.keys()].sort();
    /** The terms of the documents changed, before and after: the cached answers they may change. */
    const touched: string[] = [];
    await withTransaction(this.db.pool, async (tx) => {
      await this.lock(tx);
      const old = await tx.query<{ id: string; kind: string; url: string; tags: string[]; h: string; terms: string[] }>(
        "SELECT id, kind, url, tags, h, tsvector_to_array(tsv) AS terms FROM documents WHERE id = ANY($1)",
        [ids],
      );
      const before = new Map(old.rows.map((r) => [r.id, r]));
      const delta = new Map<string, number>();
      const add = (terms: string[], n: number) => {
        for (const t of terms) delta.set(t, (delta.get(t) ?? 0) + n);
      };
      const changed: Prepared[] = [];
      let added = 0;
      for (const id of ids) {
        const p = byId.get(id)!;
        const o = before.get(id);
        if (o && o.h === p.h && o.kind === p.kind && o.url === p.url && o.tags.join(" ") === p.tags.join(" ")) continue;
        if (!o) added++;
        if (o?.h !== p.h) {
          if (o) add(o.terms, -1);
          add(p.terms, 1);
        }
        changed.push(p);
        touched.push(...p.terms, ...(o?.terms ?? []));
      }
      if (changed.length > 0)
        await tx.query(
          `INSERT INTO documents (id, kind, title, url, tags, body, tsv, title_terms, title_tsv, h)
           SELECT id, kind, title, url, string_to_array(tags, ' '), body, tsv::tsvector, title_terms, title_tsv::tsvector, h
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[],
                         $9::text[], $10::text[])
                  AS u(id, kind, title, url, tags, body, tsv, title_terms, title_tsv, h)
           ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, title = excluded.title, url = excluded.url,
             tags = excluded.tags, body = excluded.body, tsv = excluded.tsv, title_terms = excluded.title_terms,
             title_tsv = excluded.title_tsv, h = excluded.h`,
          [
            changed.map((p) => p.id),
            changed.map((p) => p.kind),
            changed.map((p) => p.title),
            changed.map((p) => p.url),
            changed.map((p) => p.tags.join(" ")),
            changed.map((p) => p.body),
            changed.map((p) => p.tsv),
            changed.map((p) => p.titleTerms),
            changed.map((p) => p.titleTsv),
            changed.map((p) => p.h),
          ],
        );
      await applyDelta(tx, delta);
      await advance(tx, added, eventId);
    });
    if (touched.length > 0) this.results.invalidate(touched);
  }

  /** See SearchEngine.retag: one row's `tags` rewritten under the write lock; the event recorded as applied. */
  async retag(id: string, retag: (tags: string[]) => string[] | undefined, eventId?: string): Promise<boolean> {
    let touched: string[] = [];
    const done = await withTransaction(this.db.pool, async (tx) => {
      await this.lock(tx);
      const old = (await tx.query<{ tags: string[] }>("SELECT tags FROM documents WHERE id = $1", [id])).rows[0];
      const tags = old ? retag(old.tags)?.map((t) => t.toLowerCase()) : undefined;
      if (!old || !tags) return false;
      if (tags.join(" ") !== old.tags.join(" ")) {
        const r = await tx.query<{ terms: string[] }>(
          "UPDATE documents SET tags = $2 WHERE id = $1 RETURNING tsvector_to_array(tsv) AS terms",
          [id, tags],
        );
        touched = r.rows[0]?.terms ?? [];
      }
      await advance(tx, 0, eventId);
      return true;
    });
    if (touched.length > 0) this.results.invalidate(touched);
    return done;
  }

  async remove(ids: string[], eventId?: string): Promise<void> {
    if (ids.length === 0 && eventId === undefined) return;
    const touched: string[] = [];
    await withTransaction(this.db.pool, async (tx) => {
      await this.lock(tx);
      const gone = await tx.query<{ terms: string[] }>(
        "DELETE FROM documents WHERE id = ANY($1) RETURNING tsvector_to_array(tsv) AS terms",
        [ids],
      );
      const delta = new Map<string, number>();
      for (const r of gone.rows) for (const t of r.terms) delta.set(t, (delta.get(t) ?? 0) - 1);
      for (const r of gone.rows) touched.push(...r.terms);
      await applyDelta(tx, delta);
      await advance(tx, -gone.rows.length, eventId);
    });
    if (touched.length > 0) this.results.invalidate(touched);
  }

  async search(q: string, tags: string[], limit: number, opts: SearchOptions = {}): Promise<SearchResult> {
    const want = tags.map((t) => t.toLowerCase());
    let words = queryTerms(q);
    if (opts.match === "any") words = words.filter((t) => !STOPWORDS.has(t) && !(isCjk(t) && [...t].length < 2));
    if (words.length === 0) return q.trim() === "" ? this.list(want, limit) : { hits: [], total: 0 };
    // `all` answers come from the result cache while no write here touched their terms (docs/design/search-and-translation.md#result-cache)
    const key = opts.match === "any" ? undefined : ResultCache.key(words, want, limit);
    const cached = key === undefined ? undefined : this.results.get(key);
    if (key !== undefined) knowledgeCacheLookups.inc({ cache: "search_results", result: cached ? "hit" : "miss" });
    if (cached) return cached;
    const version = this.results.current;
    const c = await this.db.pool.connect();
    // a connection lost while checked out must fail this search, not crash the process, and is
    // never pooled again (as platform's withTransaction does)
    let lost: Error | undefined;
    const onError = (err: Error) => void (lost = err);
    c.on("error", onError);
    // Behind PgBouncer in transaction mode the next statement may run on another server
    // connection: one read-only transaction holds the search and its trigram threshold (docs/design/operations.md#connection-budget-and-pgbouncer).
    const pooled = this.db.pooler === "transaction";
    try {
      if (pooled) {
        await c.query("BEGIN READ ONLY");
        inPooledTransaction.add(c);
      }
      await withoutJit(c, pooled);
      let forms: Forms[] = [];
      const result =
        opts.match === "any"
          ? await this.any(c, words, want, limit, opts.minScore ?? 0)
          : await this.all(c, words, want, limit, (f) => (forms = f));
      if (pooled) await c.query("COMMIT");
      if (key !== undefined) {
        const terms = forms.flatMap((f) => [f.word, ...f.exact, ...f.fuzzy, ...f.bigrams]);
        this.results.set(key, result, terms, words.at(-1)!, version);
      }
      return result;
    } catch (err) {
      lost ??= isDatabaseUnavailable(err) ? (err as Error) : undefined;
      if (pooled && !lost) await c.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      if (pooled) {
        inPooledTransaction.delete(c);
        thresholds.delete(c);
      }
      c.removeListener("error", onError);
      c.release(lost);
    }
  }

  /**
   * An empty query: the tagged documents, newest id first, and how many there are — counted up to
   * `exactMatches`, above that estimated from the share of the newest `recentWindow` documents
   * carrying the tags (docs/design/search-and-translation.md#bounded-candidates): the cost does not grow with the index.
   */
  private async list(tags: string[], limit: number): Promise<SearchResult> {
    const { exactMatches, recentWindow } = this.bounds;
    const r = await this.db.pool.query<PageRow>(
      `WITH matched AS MATERIALIZED (
         SELECT id FROM documents WHERE tags @> $1::text[] LIMIT ${exactMatches + 1}
       ), counted AS (
         SELECT count(*) AS n FROM matched
       ), newest AS (
         -- few: the newest of those read; many: the primary key read backwards finds them soon
         (SELECT id FROM matched WHERE (SELECT n FROM counted) <= ${exactMatches} ORDER BY id DESC LIMIT $2)
         UNION ALL
         (SELECT id FROM documents WHERE (SELECT n FROM counted) > ${exactMatches} AND tags @> $1::text[]
           ORDER BY id DESC LIMIT $2)
       ), share AS (
         SELECT count(*) FILTER (WHERE w.tags @> $1::text[]) AS hits, GREATEST(count(*), 1) AS seen
           FROM (SELECT tags FROM documents ORDER BY id DESC LIMIT ${recentWindow}) w
       ), ranked AS (
         SELECT id, 0 AS score,
                (SELECT CASE WHEN c.n <= ${exactMatches} THEN c.n
                        ELSE GREATEST(c.n, round(s.hits::float8 / s.seen * (SELECT docs FROM index_state)))::bigint END
                   FROM counted c, share s) AS total,
                row_number() OVER (ORDER BY id DESC) AS rank
           FROM newest
       )
       ${PAGE_SELECT}`,
      [tags, limit],
    );
    return page(r.rows, []);
  }

  /**
   * `all`: documents holding every word (each through any of its forms), ranked by how many words
   * they match only through a typo, then Σ IDF × ts_rank, then id. When more than `exactMatches`
   * documents may match (the words' reach), the candidates are bounded (`boundedSql`, docs/design/search-and-translation.md#bounded-candidates);
   * otherwise every match is a candidate and `total` is exact.
   */
  private async all(
    c: Tx,
    words: string[],
    tags: string[],
    limit: number,
    read: (forms: Forms[]) => void = () => {},
  ): Promise<SearchResult> {
    const { forms, n } = await this.expand(c, words, true);
    read(forms);
    if (forms.some((f) => f.exact.length + f.fuzzy.length + f.bigrams.length === 0)) return { hits: [], total: 0 };
    const q = allQuery(forms, n);
    const { exactMatches } = this.bounds;
    if (Math.min(...forms.map((f) => f.reach)) > exactMatches) {
      const r = await c.query<PageRow & { complete: boolean }>(this.boundedSql, [
        ...q.params,
        tags,
        limit,
        n,
        titleQuery(forms, this.bounds.titleReach),
      ]);
      const first = r.rows[0];
      // unless the newest documents say few match after all (every match is then cheap to read)
      if (first && (first.complete || Number(first.total) > exactMatches)) return page(r.rows, formsTerms(forms));
    }
    const r = await c.query<PageRow>(EXACT_SQL, [...q.params, tags, limit]);
    return page(r.rows, formsTerms(forms));
  }

  /**
   * `any` (duplicate check, docs/design/search-and-translation.md): the `SIMILAR_TERMS` rarest words not in more than
   * `COMMON_SHARE` of the documents weigh their IDF; candidates come from the rarest ones (beyond
   * `SIMILAR_MIN_TERMS`, only while their posting lists fit in `SIMILAR_POSTINGS` entries); a word the vocabulary lacks
   * (a typo?) stands for its typo candidates. A document's score is the share (0–1) of the weight it
   * holds; hits below `minScore` are dropped. `total` counts the hits among the SIMILAR_RERANK candidates.
   */
  private async any(c: Tx, words: string[], tags: string[], limit: number, minScore: number): Promise<SearchResult> {
    const grams = words.filter(isCjk).flatMap((w) => (bigramsOf(w).length > 1 ? bigramsOf(w) : []));
    const found = await lookup(c, [...words, ...grams]);
    const known = found.df;
    const n = Math.max(found.n, 1);
    // a word the index holds is looked up as it is; only an unknown one (a typo?) with the typo rules
    const unknown = words.filter((w) => !known.has(w) && !isCjk(w));
    const fuzzy =
      unknown.length > 0 ? await this.typoForms(c, unknown) : new Map<string, { term: string; df: number }[]>();
    const usable = words
      .map((word, i) => {
        const f: Forms = { word, exact: [], fuzzy: [], bigrams: [], df: known.get(word) ?? 0, reach: 0 };
        if (f.df > 0) f.exact = [word];
        else if (isCjk(word)) {
          // a CJK word the segmenter cut otherwise: all of its bigrams (df: the rarest one's, an upper bound)
          const g = bigramsOf(word);
          if (g.length > 1 && g.every((x) => known.has(x))) {
            f.bigrams = g;
            f.df = Math.min(...g.map((x) => known.get(x)!));
          }
        } else {
          const typos = fuzzy.get(word) ?? [];
          f.fuzzy = typos.map((x) => x.term);
          f.df = Math.min(
            n,
            typos.reduce((s, x) => s + x.df, 0),
          );
        }
        return { f, i };
      })
      .filter((x) => x.f.df > 0 && x.f.df <= n * COMMON_SHARE)
      .sort((a, b) => a.f.df - b.f.df || a.i - b.i);
    // Two stages (docs/design/search-and-translation.md#the-postgresql-engine): the rarest words — as many as fit in the budget of posting-list
    // entries, at least SIMILAR_MIN_TERMS — give every candidate and its partial score from GIN
    // alone; the SIMILAR_RERANK best candidates that could still reach minScore are then scored on the
    // other words from their tsvectors.
    const chosen = usable.slice(0, SIMILAR_TERMS).map((x) => ({ f: x.f, w: Math.log(1 + n / x.f.df) }));
    if (chosen.length === 0) return { hits: [], total: 0 };
    let readWords = 0;
    for (let entries = 0; readWords < chosen.length; readWords++) {
      const df = chosen[readWords]!.f.df;
      if (readWords >= SIMILAR_MIN_TERMS && entries + df > SIMILAR_POSTINGS) break;
      entries += df;
    }
    const read = chosen.slice(0, readWords);
    const rest = chosen.slice(readWords);
    const total = chosen.reduce((s, x) => s + x.w, 0);
    const restWeight = rest.reduce((s, x) => s + x.w, 0);
    const r = await c.query<PageRow>(
      `WITH partial AS (
         SELECT m.id, sum(u.w) AS p
           FROM unnest($1::tsquery[], $2::float8[]) AS u(q, w)
           CROSS JOIN LATERAL (SELECT d.id FROM documents d WHERE d.tsv @@ u.q AND d.tags @> $4::text[]) m
          GROUP BY m.id
         HAVING sum(u.w) + $5::float8 >= $6::float8 * $3::float8
          ORDER BY p DESC, m.id DESC
          LIMIT ${SIMILAR_RERANK}
       ), scored AS MATERIALIZED (
         SELECT c.id,
                (c.p + (SELECT coalesce(sum(v.w), 0) FROM unnest($7::tsquery[], $8::float8[]) AS v(q, w) WHERE d.tsv @@ v.q))
                  / $3::float8 AS score
           FROM partial c JOIN documents d ON d.id = c.id
       )
       , ranked AS (
       SELECT id, score, count(*) OVER () AS total, row_number() OVER (ORDER BY score DESC, id DESC) AS rank FROM scored
        WHERE score >= $6::float8
        ORDER BY score DESC, id DESC
        LIMIT $9
       )
       ${PAGE_SELECT}`,
      [
        read.map((x) => wordQuery(x.f, true)),
        read.map((x) => x.w),
        total,
        tags,
        restWeight,
        minScore,
        rest.map((x) => wordQuery(x.f, true)),
        rest.map((x) => x.w),
        limit,
      ],
    );
    return page(r.rows, formsTerms(chosen.map((x) => x.f)));
  }

  /** The vocabulary forms of each query word: exact, prefix (the last word, `prefix`), typos, CJK bigrams. */
  private async expand(c: Tx, words: string[], prefix: boolean): Promise<{ forms: Forms[]; n: number }> {
    const grams = words.filter(isCjk).flatMap((w) => (bigramsOf(w).length > 1 ? bigramsOf(w) : []));
    const latin = words.filter((w) => !isCjk(w));
    // the cached typo candidates' document frequencies come with the words' own (one round trip)
    const cached = this.cachedTypos(latin);
    const { n, df: known } = await lookup(c, [...words, ...grams, ...[...cached.values()].flat()]);
    const fuzzy = await this.typoForms(c, latin, cached, known);
    const last = words.length - 1;
    const forms: Forms[] = [];
    for (const [i, word] of words.entries()) {
      const df = known.get(word) ?? 0;
      const f: Forms = { word, exact: df > 0 ? [word] : [], fuzzy: [], bigrams: [], df, reach: df };
      if (isCjk(word)) {
        const grams = bigramsOf(word);
        if (grams.length > 1) {
          f.bigrams = grams;
          // every bigram must match: at most the rarest one's documents (0 when one is unknown)
          f.reach += Math.min(...grams.map((g) => known.get(g) ?? 0));
        }
      } else {
        const typos = fuzzy.get(word) ?? [];
        f.fuzzy = typos.map((x) => x.term);
        const typoDf = typos.reduce((s, x) => s + x.df, 0);
        if (f.df === 0) f.df = typoDf;
        f.reach += typoDf;
        if (prefix && i === last) {
          const prefixed = await prefixForms(c, word);
          f.exact.push(...prefixed.map((x) => x.term));
          f.reach += prefixed.reduce((s, x) => s + x.df, 0);
        }
      }
      forms.push(f);
    }
    return { forms, n };
  }

  /** The pool belongs to the caller, who closes it. */
  async close(): Promise<void> {}
}

/** A row of a ranked page: the hit's stored fields and plain body, its score, the count of every match. */
interface PageRow extends Omit<PlainDocument, "h"> {
  score: number;
  total: string;
}

/**
 * The final SELECT of every search: `ranked` (id, score, total, rank) joined with the stored fields
 * and plain body of its rows only (one round trip; the body is read for the page, never for ranking).
 */
const PAGE_SELECT = `SELECT r.id, r.score, r.total, d.kind, d.title, d.url, d.tags, d.body
  FROM ranked r JOIN documents d ON d.id = r.id ORDER BY r.rank`;

/**
 * The parameters $1–$6 of `EXACT_SQL` and `boundedSql` for a query's forms: per word its tsquery
 * with typos ($1) and without (null: only typos match it, $2), its IDF over `n` documents ($3); all
 * words ($4), all words without typos ($5, null if a word has only typos), several words ($6).
 */
function allQuery(
  forms: Forms[],
  n: number,
): { params: [string[], (string | null)[], number[], string, string | null, boolean] } {
  const all = forms.map((f) => wordQuery(f, true));
  const exact = forms.map((f) => (f.exact.length + f.bigrams.length > 0 ? wordQuery(f, false) : null));
  const idf = forms.map((f) => Math.log(1 + n / Math.max(1, f.df)));
  const and = all.map((x) => `(${x})`).join(" & ");
  const allExact = exact.every((x) => x !== null) ? exact.map((x) => `(${x})`).join(" & ") : null;
  return { params: [all, exact, idf, and, allExact, forms.length > 1] };
}

/**
 * Every query word as typed (a CJK word: all of its bigrams), for the bounded search's title
 * candidates (docs/design/search-and-translation.md#bounded-candidates): null when a word is not in the vocabulary as typed, or when even the
 * rarest word as typed is held by more than `titleReach` documents (its posting list would be read
 * whole, 200 ms for a word in a million titles, for an arbitrary 300 of them). Without the typo
 * and prefix forms, GIN reads a few posting lists, not up to a hundred.
 */
function titleQuery(forms: Forms[], titleReach: number): string | null {
  if (Math.min(...forms.map((f) => (f.bigrams.length > 0 ? f.reach : f.df))) > titleReach) return null;
  const parts = forms.map((f) =>
    f.exact[0] === f.word
      ? lexemeLiteral(f.word)
      : f.bigrams.length > 0
        ? `(${f.bigrams.map(lexemeLiteral).join(" & ")})`
        : null,
  );
  return parts.every((x) => x !== null) ? parts.join(" & ") : null;
}

/** A candidate's title share of the score (alias `m`: `title_tsv`, `title_terms`), from inline columns only. */
const TITLE_SHARE = `(SELECT coalesce(sum(u.w), 0) FROM unnest($1::tsquery[], $3::float8[]) AS u(q, w) WHERE m.title_tsv @@ u.q)
  / (1 + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * m.title_terms / ${AVG_TITLE_TERMS}.0))`;

/**
 * Stage 2 of `all` (docs/design/search-and-translation.md#the-postgresql-engine): the `candidates` (id) scored in full from their tsvectors — per
 * word IDF × (typo-only: TYPO_WEIGHT) × (body ts_rank + a title match, BM25-normalised by the
 * title's length); × (1 + cover density of all the words: closer together ranks higher) — ordered
 * by typos, score, id, the first $8. `total` is the SQL expression given.
 */
function rankedSql(total: string): string {
  const titleNorm = `${TITLE_BOOST * (BM25_K1 + 1)} / (1 + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * d.title_terms / ${AVG_TITLE_TERMS}.0))`;
  return `ranked AS (
       SELECT id, score, ${total} AS total, row_number() OVER (ORDER BY typos, score DESC, id DESC) AS rank FROM (
         SELECT d.id,
           (SELECT count(*) FROM unnest($2::tsquery[]) AS e(q) WHERE e.q IS NULL OR NOT d.tsv @@ e.q) AS typos,
           (SELECT sum(u.w * CASE WHEN u.x IS NOT NULL AND d.tsv @@ u.x THEN 1 ELSE ${TYPO_WEIGHT} END
                   * (ts_rank('${BODY_WEIGHTS}', d.tsv, u.q) + CASE WHEN d.title_tsv @@ u.q THEN ${titleNorm} ELSE 0 END))
              FROM unnest($1::tsquery[], $2::tsquery[], $3::float8[]) AS u(q, x, w))
           * (1 + CASE WHEN $6 THEN ts_rank_cd('${RANK_WEIGHTS}', d.tsv, $4::tsquery, 32) ELSE 0 END) AS score
           FROM candidates c JOIN documents d ON d.id = c.id
       ) s
       ORDER BY typos, score DESC, id DESC
       LIMIT $8
     )`;
}

/**
 * `all` reading every match ($1–$6 of `allQuery`, tags $7, limit $8), in two stages so that no
 * more than RERANK documents' tsvectors are read (docs/design/search-and-translation.md#the-postgresql-engine): 1. every match, from GIN and the
 * narrow heap only, ordered by matching every word without a typo (GIN again), then the title's
 * share of the score (the inline title_tsv), id; 2. the first RERANK of those, `rankedSql`.
 * `total` counts every match.
 */
const EXACT_SQL = `WITH m AS MATERIALIZED (
         SELECT d.id, d.title_terms, d.title_tsv FROM documents d WHERE d.tsv @@ $4::tsquery AND d.tags @> $7::text[]
       ), exact AS MATERIALIZED (
         SELECT d.id FROM documents d WHERE $5::tsquery IS NOT NULL AND d.tsv @@ $5::tsquery AND d.tags @> $7::text[]
       ), candidates AS (
         SELECT m.id FROM m LEFT JOIN exact e ON e.id = m.id
          ORDER BY e.id IS NOT NULL DESC, ${TITLE_SHARE} DESC, m.id DESC
          LIMIT ${RERANK}
       ), ${rankedSql("(SELECT count(*) FROM m)")}
       ${PAGE_SELECT}`;

/**
 * `all` with bounded candidates (docs/design/search-and-translation.md#bounded-candidates; $1–$6 of `allQuery`, tags $7, limit $8, documents
 * in the index $9, `titleQuery` $10): the matches with the tags among the newest `recentWindow`
 * documents (no more are read, whatever the tags), and up to `titleCandidates` documents holding
 * every word as typed in their title (GIN on title_tsv; any of them); their best 2 × RERANK by
 * title share and id are ordered by matching every word without a typo, and the first RERANK
 * scored in full (`rankedSql`). Each row also says whether the window held every document
 * (`complete`: `total` is then exact); otherwise `total` is extrapolated from the window's share
 * of matches (at least the candidates).
 */
function boundedSql({ recentWindow, titleCandidates }: SearchBounds): string {
  return `WITH recent AS MATERIALIZED (
         SELECT w.id, w.title_terms, w.title_tsv, w.tsv @@ $4::tsquery AS hit
           FROM (SELECT d.id, d.title_terms, d.title_tsv, d.tsv, d.tags FROM documents d ORDER BY d.id DESC LIMIT ${recentWindow}) w
          WHERE w.tags @> $7::text[]
       ), titled AS MATERIALIZED (
         SELECT d.id, d.title_terms, d.title_tsv FROM documents d
          WHERE $10::tsquery IS NOT NULL AND d.title_tsv @@ $10::tsquery AND d.tags @> $7::text[] LIMIT ${titleCandidates}
       ), m AS MATERIALIZED (
         SELECT id, title_terms, title_tsv FROM recent WHERE hit
         UNION SELECT id, title_terms, title_tsv FROM titled
       ), window_share AS (
         SELECT $9::int < ${recentWindow} AS complete, count(*) FILTER (WHERE hit) AS hits, LEAST($9::int, ${recentWindow}) AS seen FROM recent
       ), estimate AS (
         SELECT complete, GREATEST((SELECT count(*) FROM m),
                  CASE WHEN complete THEN hits ELSE round(hits::float8 * $9::int / GREATEST(seen, 1)) END)::bigint AS n
           FROM window_share
       ), pre AS MATERIALIZED (
         SELECT m.id, ${TITLE_SHARE} AS share FROM m ORDER BY share DESC, m.id DESC LIMIT ${2 * RERANK}
       ), candidates AS (
         SELECT p.id FROM pre p JOIN documents d ON d.id = p.id
          ORDER BY ($5::tsquery IS NOT NULL AND d.tsv @@ $5::tsquery) DESC, p.share DESC, p.id DESC
          LIMIT ${RERANK}
       ), ${rankedSql("(SELECT n FROM estimate)")}
       SELECT r.id, r.score, r.total, (SELECT complete FROM estimate) AS complete, d.kind, d.title, d.url, d.tags, d.body
         FROM ranked r JOIN documents d ON d.id = r.id ORDER BY r.rank`;
}

/** The hits of a ranked page, with snippets of the stored plain text marked with `terms`. */
function page(rows: PageRow[], terms: string[]): SearchResult {
  return {
    total: Number(rows[0]?.total ?? 0),
    hits: rows.map((d): SearchHit => ({
      id: d.id,
      kind: d.kind,
      title: d.title,
      url: d.url,
      snippet: bestSnippet(d.title, d.body, terms),
      tags: d.tags,
      score: Math.round(d.score * 1000) / 1000,
    })),
  };
}

/** The document as written: plain body, tsvector of title (A) and body (D) terms, distinct terms, digest. */
function prepare(d: KnowledgeDoc): Prepared {
  const doc = plainDocument(d);
  const title = analyze(doc.title);
  const { literal, terms } = tsvectorLiteral(title, analyze(doc.body));
  return { ...doc, tsv: literal, terms, titleTerms: title.length, titleTsv: lexemesLiteral(title) };
}

/** One word's tsquery: any of its forms (`withTypos`: typo forms too); CJK also all of its bigrams. */
function wordQuery(f: Forms, withTypos: boolean): string {
  const alternatives = [...f.exact, ...(withTypos ? f.fuzzy : [])].map(lexemeLiteral);
  if (f.bigrams.length > 0) alternatives.push(`(${f.bigrams.map(lexemeLiteral).join(" & ")})`);
  return orQuery(alternatives);
}

/** Every vocabulary form of the query, for the snippets' marks. */
function formsTerms(forms: Forms[]): string[] {
  return [...new Set(forms.flatMap((f) => [f.word, ...f.exact, ...f.fuzzy]))];
}

/**
 * SQL: the vocabulary rows (`term`, `df` > 0) of the words `$1` (text[], duplicates allowed), then
 * one row (NULL, the documents in the index). Each word is found by a range of one value
 * (`term >= w AND term <= w`) rather than `term = ANY($1)`: pg_trgm's GIN opclass also answers `=`,
 * and the planner, trusting its low estimate, took the trigram index for it — 1,600 buffers and
 * ≈ 40 ms for five words at 22,000 terms, against 15 buffers and 0.1 ms on the btree, which alone
 * answers a range (docs/design/search-and-translation.md#the-postgresql-engine).
 */
export const LOOKUP_SQL = `SELECT t.term, t.df FROM unnest($1::text[]) AS w(q)
  CROSS JOIN LATERAL (SELECT term, df FROM terms WHERE term >= w.q AND term <= w.q AND df > 0) t
  UNION ALL SELECT NULL, docs FROM index_state`;

/** SQL: deletes the terms `$1` (text[]) that no document holds any more, found on the btree as LOOKUP_SQL's. */
export const DROP_TERMS_SQL = `DELETE FROM terms t USING unnest($1::text[]) AS w(q)
  WHERE t.term >= w.q AND t.term <= w.q AND t.df <= 0`;

/** Document frequencies of the words the vocabulary holds, and `n`, the documents in the index (one round trip). */
async function lookup(c: Tx, words: string[]): Promise<{ n: number; df: Map<string, number> }> {
  const r = await c.query<{ term: string | null; df: number }>(LOOKUP_SQL, [words]);
  const df = new Map<string, number>();
  let n = 0;
  for (const x of r.rows) {
    if (x.term === null) n = x.df;
    else df.set(x.term, x.df);
  }
  return { n, df };
}

/** The `EXPANSIONS` most frequent terms starting with `word` (other than itself), with their document frequencies. */
async function prefixForms(c: Tx, word: string): Promise<{ term: string; df: number }[]> {
  const r = await c.query<{ term: string; df: number }>(
    `SELECT term, df FROM terms WHERE term > $1 AND term < $1 || chr(1114111) AND df > 0 ORDER BY df DESC LIMIT ${EXPANSIONS}`,
    [word],
  );
  return r.rows;
}

/**
 * Lowest trigram similarity (pg_trgm) a term within `k` typos of an `n`-letter word can have: the
 * word has n + 1 trigrams; an edit destroys at most 3 and a transposition 4 (at most one assumed),
 * and the term has at most n + k + 1. A candidate query at this threshold misses no typo of the rule
 * but for several transpositions in one word; the exact rule is then checked in JS (`isTypoOf`).
 */
export function trigramThreshold(n: number, k: number): number {
  const shared = Math.max(1, n + 1 - 3 * k - 1);
  return shared / (n + 1 + (n + k + 1) - shared);
}

/** Connections of the pool whose session has JIT compilation off already (not behind PgBouncer). */
const jitOff = new WeakSet<Tx>();

/**
 * Turns PostgreSQL's JIT compilation off for a search (docs/design/search-and-translation.md#jit-off-for-searches): the planner's estimates for
 * these CTEs are far too high (70,895 rows estimated where a tsquery matches 8, 12.6 million for
 * their join), so above `jit_optimize_above_cost` every search paid for compiling and optimising
 * ~66 functions — 0.9 s for a query that runs in 5 ms without JIT, at a million documents. Behind
 * PgBouncer in transaction mode (`pooled`) for the search's transaction only (`SET LOCAL`: no
 * session state, docs/design/operations.md#connection-budget-and-pgbouncer); otherwise once per connection (this pool serves the index alone).
 */
export async function withoutJit(c: Tx, pooled: boolean): Promise<void> {
  if (pooled) {
    await c.query("SET LOCAL jit = off");
    return;
  }
  if (jitOff.has(c)) return;
  await c.query("SET jit = off");
  jitOff.add(c);
}

/** pg_trgm's similarity threshold each pooled connection was last given (or, behind PgBouncer, its transaction). */
const thresholds = new WeakMap<Tx, string>();

/** Clients inside a search's transaction behind PgBouncer: their threshold is set for that transaction only (docs/design/operations.md#connection-budget-and-pgbouncer). */
const inPooledTransaction = new WeakSet<Tx>();

/**
 * Typo candidates of each Latin word with a typo budget: vocabulary terms found by trigram
 * similarity (pg_trgm's GIN index, threshold of the most permissive word), kept when typos.ts's rule
 * holds, with their document frequencies. Every word with a budget has an entry, an empty list when
 * it has no candidate (so that too is cached, PostgresEngine `typoForms`).
 */
async function fuzzyForms(c: Tx, words: string[]): Promise<Map<string, { term: string; df: number }[]>> {
  const out = new Map<string, { term: string; df: number }[]>();
  const typoable = words.filter((w) => typosAllowed(w) > 0);
  if (typoable.length === 0) return out;
  for (const w of typoable) out.set(w, []);
  const threshold = Math.min(...typoable.map((w) => trigramThreshold([...w].length, typosAllowed(w))));
  // the connection's own setting (this pool serves the index alone), set when it changes
  const wanted = threshold.toFixed(3);
  if (thresholds.get(c) !== wanted) {
    await c.query("SELECT set_config('pg_trgm.similarity_threshold', $1, $2)", [wanted, inPooledTransaction.has(c)]);
    thresholds.set(c, wanted);
  }
  const r = await c.query<{ i: string; term: string; df: number }>(
    `SELECT w.i, t.term, t.df
       FROM unnest($1::text[]) WITH ORDINALITY AS w(q, i)
       CROSS JOIN LATERAL (SELECT term, df FROM terms WHERE term % w.q AND df > 0) t`,
    [typoable],
  );
  for (const row of r.rows) {
    const word = typoable[Number(row.i) - 1]!;
    if (isTypoOf(word, row.term)) out.get(word)!.push({ term: row.term, df: row.df });
  }
  return out;
}

/** Adds `delta` to the document frequencies of its terms (sorted: concurrent writers lock rows in one order); drops terms no document holds. */
async function applyDelta(tx: Tx, delta: Map<string, number>): Promise<void> {
  const entries = [...delta].filter(([, n]) => n !== 0).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (entries.length === 0) return;
  await tx.query(
    `INSERT INTO terms (term, df) SELECT * FROM unnest($1::text[], $2::int[])
     ON CONFLICT (term) DO UPDATE SET df = terms.df + excluded.df`,
    [entries.map((e) => e[0]), entries.map((e) => e[1])],
  );
  const dropped = entries.filter(([, n]) => n < 0).map((e) => e[0]);
  if (dropped.length > 0) await tx.query(DROP_TERMS_SQL, [dropped]);
}

/** Counts the documents added (or removed, negative) and, for a change made for an event, records it as the last applied. */
async function advance(tx: Tx, added: number, eventId: string | undefined): Promise<void> {
  if (eventId === undefined) {
    if (added !== 0) await tx.query("UPDATE index_state SET docs = docs + $1", [added]);
    return;
  }
  await tx.query("UPDATE index_state SET docs = docs + $1, event_id = $2, applied = applied + 1", [added, eventId]);
}
