import { STOPWORDS, words } from "./text.js";

/**
 * Minimum score (0–1) of a `/posts/similar` hit. Embedded engine: the IDF-weighted share of
 * the draft's distinctive words a post holds (engine.ts `any`); Meilisearch: `_rankingScore`
 * (`rankingScoreThreshold`). Below it a post only shares a word or two with the draft.
 */
export const SIMILAR_MIN_SCORE = 0.3;

/**
 * The query of a duplicate check: the distinct words of the title and of the body's first `bodyChars`
 * characters, in order, without stop-words (text.ts `STOPWORDS`: they carry no weight, and
 * Meilisearch reads only the first 10 words of a query).
 */
export function similarQuery(title: string, body: string, bodyChars = 300): string {
  const text = `${title} ${body.slice(0, bodyChars)}`;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const w of words(text)) {
    if (STOPWORDS.has(w.term) || seen.has(w.term)) continue;
    seen.add(w.term);
    out.push(text.slice(w.start, w.end));
  }
  return out.join(" ");
}
