import type { Query, SearchOptions as MiniOptions } from "minisearch";
import { distance } from "fastest-levenshtein";
import { bigramsOf, isCjk } from "./text.js";

/**
 * Meilisearch's typo rule (https://www.meilisearch.com/docs/learn/relevancy/typo_tolerance_settings,
 * defaults `minWordSizeForTypos` oneTypo 5, twoTypos 9): edits allowed for a query word of `length`
 * characters — 0 below 5, 1 from 5, 2 from 9. CJK words: 0 (they match by segmentation and bigrams).
 */
export function typosAllowed(term: string): number {
  if (isCjk(term)) return 0;
  const n = [...term].length;
  return n >= 9 ? 2 : n >= 5 ? 1 : 0;
}

/**
 * The words `term` becomes with two adjacent letters swapped. Meilisearch counts a transposition as
 * one typo (Damerau–Levenshtein); MiniSearch's Levenshtein counts two, so the query also looks these
 * up, with one edit fewer than the word allows.
 */
export function transpositions(term: string): string[] {
  const c = [...term];
  const out = new Set<string>();
  for (let i = 0; i + 1 < c.length; i++) {
    if (c[i] === c[i + 1]) continue;
    out.add([...c.slice(0, i), c[i + 1], c[i], ...c.slice(i + 2)].join(""));
  }
  return [...out];
}

/**
 * The MiniSearch query for one analysed query term (docs/design/search-and-translation.md#query-rules):
 * - Latin: the term with `typosAllowed` edits, plus its transpositions with one edit fewer;
 *   a prefix match when `prefix` (Meilisearch: the last query word).
 * - CJK: the word itself, or every character bigram of it (however the segmenter cut the document).
 */
export function termQuery(term: string, prefix: boolean): Query {
  if (isCjk(term)) {
    const grams = bigramsOf(term);
    const queries: Query[] = [term];
    if (grams.length > 1) queries.push({ combineWith: "AND", queries: grams });
    return { combineWith: "OR", queries, fuzzy: false, prefix: false };
  }
  const typos = typosAllowed(term);
  const base: MiniOptions = { prefix, fuzzy: typos === 0 ? false : typos };
  if (typos === 0) return { ...base, combineWith: "OR", queries: [term] };
  return {
    combineWith: "OR",
    queries: [
      { ...base, combineWith: "OR", queries: [term] },
      { combineWith: "OR", queries: transpositions(term), fuzzy: typos === 2 ? 1 : false, prefix: false },
    ],
  };
}

/**
 * True when the vocabulary term `term` is a typo of the query word `word` by Meilisearch's rule as
 * the embedded engines apply it (docs/design/search-and-translation.md#query-rules): at most `typosAllowed(word)` edits
 * (Levenshtein, `fastest-levenshtein`), or a transposition of `word` plus one edit fewer. The word
 * itself is not a typo of itself (false), and CJK words allow none.
 */
export function isTypoOf(word: string, term: string): boolean {
  const k = typosAllowed(word);
  if (k === 0 || term === word) return false;
  if (Math.abs([...term].length - [...word].length) > k) return false;
  if (distance(word, term) <= k) return true;
  return transpositions(word).some((t) => t === term || (k > 1 && distance(t, term) <= k - 1));
}
