import { LRUCache } from "lru-cache";
import type { SearchResult } from "../engine.js";

/** Settings of a {@link ResultCache} (docs/design/search-and-translation.md#result-cache). */
export interface ResultCacheOptions {
  /** Answers kept at most (least recently used dropped first); 0 turns the cache off. */
  maxEntries: number;
  /** How long an answer is served at most, ms: the bound on what no invalidation here reaches. */
  ttlMs: number;
  /** The clock, ms (tests move it). */
  now?: () => number;
}

/** The defaults: 500 answers (a page of hits with snippets each, ≈ 5 MiB at most), 10 s. */
export const RESULT_CACHE: ResultCacheOptions = { maxEntries: 500, ttlMs: 10_000 };

interface Entry {
  result: SearchResult;
  /** The vocabulary terms the answer was read through (every form of every query word). */
  terms: string[];
  /** The last query word, whose prefixes are forms too. */
  prefix: string;
  at: number;
}

/**
 * Search answers of one process by normalised query (docs/design/search-and-translation.md#result-cache),
 * dropped when a document holding one of the terms the answer was read through — or a term the
 * query's last word prefixes — is written, retagged or removed here (`invalidate`, after the
 * write's commit), and served for at most `ttlMs`. A search that ran while any invalidation
 * happened is not stored, so an answer read before a commit never outlives it.
 */
export class ResultCache {
  private readonly lru: LRUCache<string, Entry> | undefined;
  /** Keys by term read through, and by last query word (prefix), kept in step by the LRU's dispose. */
  private readonly byTerm = new Map<string, Set<string>>();
  private readonly byPrefix = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a search started under an older version is not stored. */
  private version = 0;
  private readonly now: () => number;

  constructor(private readonly opts: ResultCacheOptions = RESULT_CACHE) {
    this.now = opts.now ?? Date.now;
    if (opts.maxEntries > 0 && opts.ttlMs > 0)
      this.lru = new LRUCache<string, Entry>({
        max: opts.maxEntries,
        dispose: (e, key) => {
          for (const t of e.terms) unindex(this.byTerm, t, key);
          unindex(this.byPrefix, e.prefix, key);
        },
      });
  }

  /** The key of a search: its normalised words in order, its tags and its limit. */
  static key(words: string[], tags: string[], limit: number): string {
    return JSON.stringify([words, tags, limit]);
  }

  /** The version to pass to `set` for a search starting now. */
  get current(): number {
    return this.version;
  }

  /** A fresh answer for `key`, or undefined. */
  get(key: string): SearchResult | undefined {
    const e = this.lru?.get(key);
    if (!e) return undefined;
    if (this.now() - e.at >= this.opts.ttlMs) {
      this.lru!.delete(key);
      return undefined;
    }
    return { ...e.result, hits: e.result.hits.slice() };
  }

  /** Keeps `result`, read through `terms` with `prefix` the last word, unless an invalidation happened since `version`. */
  set(key: string, result: SearchResult, terms: Iterable<string>, prefix: string, version: number): void {
    if (!this.lru || version !== this.version) return;
    const distinct = [...new Set(terms)];
    this.lru.set(key, { result, terms: distinct, prefix, at: this.now() });
    for (const t of distinct) index(this.byTerm, t, key);
    index(this.byPrefix, prefix, key);
  }

  /** Drops every answer read through one of `terms`, or whose last word prefixes one of them. */
  invalidate(terms: Iterable<string>): void {
    if (!this.lru) return;
    this.version++;
    // nothing cached (a rebuild before any search): no term to look up
    if (this.lru.size === 0) return;
    const keys = new Set<string>();
    for (const t of new Set(terms)) {
      for (const k of this.byTerm.get(t) ?? []) keys.add(k);
      for (let i = 1; i <= t.length; i++) for (const k of this.byPrefix.get(t.slice(0, i)) ?? []) keys.add(k);
    }
    for (const k of keys) this.lru.delete(k);
  }
}

function index(map: Map<string, Set<string>>, term: string, key: string): void {
  let keys = map.get(term);
  if (!keys) map.set(term, (keys = new Set()));
  keys.add(key);
}

function unindex(map: Map<string, Set<string>>, term: string, key: string): void {
  const keys = map.get(term);
  if (!keys) return;
  keys.delete(key);
  if (keys.size === 0) map.delete(term);
}
