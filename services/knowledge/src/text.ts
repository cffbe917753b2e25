/**
 * Text analysis of the embedded engine (docs/design/services.md#two-ways-to-run, docs/design/search-and-translation.md#search-engines): `Intl.Segmenter` word segmentation
 * (dictionary-based for Chinese/Japanese), character bigrams over CJK runs so a Chinese query word
 * matches however the segmenter cut the document, and lowercase + light plural stemming for
 * English, so mixed-language text needs no language detection.
 */

const segmenter = new Intl.Segmenter("zh", { granularity: "word" });
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** True when `s` contains a CJK character. */
export function isCjk(s: string): boolean {
  return CJK.test(s);
}

/** Lowercase + a light English stemmer (plurals): `proposals` → `proposal`, `queries` → `query`. */
export function stem(word: string): string {
  const w = word.toLowerCase();
  if (w.length <= 3 || isCjk(w) || /\d/.test(w)) return w;
  if (w.endsWith("ies") && w.length > 4) return `${w.slice(0, -3)}y`;
  if (/(ss|sh|ch|x|z)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) return w.slice(0, -1);
  return w;
}

/** One word of a text with its offsets. */
export interface Word {
  start: number;
  end: number;
  /** Normalised form: stemmed lowercase (English) or the CJK word as segmented. */
  term: string;
}

const CJK_CLASS = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}";
/** A CJK run, or a run of other letters/digits (with inner apostrophes). */
const TOKEN = new RegExp(
  `[${CJK_CLASS}]+|(?:(?![${CJK_CLASS}])[\\p{L}\\p{N}\\p{M}])+(?:['’](?:(?![${CJK_CLASS}])[\\p{L}\\p{N}\\p{M}])+)*`,
  "gu",
);

/**
 * The words of `text` (normalised), in order: CJK runs are cut by `Intl.Segmenter` (dictionary
 * based); other letters and digits split at anything else (the segmenter's rule for them, faster).
 */
export function words(text: string): Word[] {
  const out: Word[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const run = m[0];
    const at = m.index;
    if (isCjk(run)) {
      for (const s of segmenter.segment(run)) {
        if (!s.isWordLike) continue;
        out.push({
          start: at + s.index,
          end: at + s.index + s.segment.length,
          term: s.segment.normalize("NFKC").toLowerCase(),
        });
      }
    } else {
      out.push({
        start: at,
        end: at + run.length,
        term: stem(
          run
            .normalize("NFKC")
            .toLowerCase()
            .replace(/['’]s$/, ""),
        ),
      });
    }
  }
  return out;
}

/** Character unigrams and bigrams of every CJK run in `text` (lowercased). */
export function cjkGrams(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize("NFKC").matchAll(CJK_RUN)) {
    const chars = [...m[0]];
    for (let i = 0; i < chars.length; i++) {
      out.push(chars[i]!);
      if (i + 1 < chars.length) out.push(chars[i]! + chars[i + 1]!);
    }
  }
  return out;
}

/**
 * The index terms of `text` in order, repeated as often as they occur (term frequency counts): the
 * segmenter's words, then the CJK unigrams and bigrams the segmenter did not already produce as words.
 */
export function analyze(text: string): string[] {
  const out: string[] = [];
  const seenWords = new Set<string>();
  for (const w of words(text)) {
    out.push(w.term);
    if (isCjk(w.term)) seenWords.add(w.term);
  }
  // Grams the segmenter already produced as words are not counted twice.
  for (const g of cjkGrams(text)) if (!seenWords.has(g)) out.push(g);
  return out;
}

/**
 * English function words (and "per") dropped from "similar" queries: they carry no weight there
 * (two unrelated posts sharing "agent" and "per" were flagged as duplicates). Holds each word
 * and its stem (`this` → `thi`), so it applies to query terms.
 */
export const STOPWORDS = new Set(
  `a an and are as at be by for from has have in into is it its of on or that the this to was were will with we our
  you your i per can could should would may might must do does did not no but if so than then there their they them
  these those what which who when where why how all any each some one also only more most other such about via
  just very up out over under after before while been being had he she his her us my me him am`
    .split(/\s+/)
    .flatMap((w) => [w, stem(w)]),
);

/** The distinct query terms of `q`, in order. */
export function queryTerms(q: string): string[] {
  return [...new Set(words(q).map((w) => w.term))];
}

/** Character bigrams of a CJK term (the term itself when shorter than 3 characters). */
export function bigramsOf(term: string): string[] {
  const chars = [...term];
  if (chars.length < 3) return [term];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/**
 * A snippet of `text` (whitespace collapsed, Markdown bold removed) of about `width` characters
 * around the first match of `terms`, with every match marked `**term**`. Without a match: the start.
 */
export function snippet(text: string, terms: string[], width = 200): string {
  const flat = text.replace(/\*\*/g, "").replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  // First occurrence of any term (a prefix search is enough to place the window).
  let first = -1;
  for (const t of terms) {
    const re = isCjk(t) ? null : new RegExp(`(?<![\\p{L}\\p{N}])${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "u");
    const i = re ? lower.search(re) : lower.indexOf(t);
    if (i >= 0 && (first < 0 || i < first)) first = i;
  }
  let start = Math.max(0, (first < 0 ? 0 : first) - Math.floor(width / 3));
  if (start > 0) {
    const sp = flat.lastIndexOf(" ", start);
    if (sp >= 0 && start - sp < 20) start = sp + 1;
  }
  const end = Math.min(flat.length, start + width);
  const win = flat.slice(start, end);
  const winLower = win.toLowerCase();
  const ranges: [number, number][] = [];
  const latin = new Set(terms.filter((t) => !isCjk(t)));
  for (const w of words(win)) if (latin.has(w.term)) ranges.push([w.start, w.end]);
  for (const t of terms) {
    if (!isCjk(t)) continue;
    for (let i = winLower.indexOf(t); i >= 0; i = winLower.indexOf(t, i + t.length)) ranges.push([i, i + t.length]);
  }
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let pos = 0;
  for (const [a, b] of ranges) {
    if (a < pos) continue;
    out += `${win.slice(pos, a)}**${win.slice(a, b)}**`;
    pos = b;
  }
  out += win.slice(pos);
  return `${start > 0 ? "…" : ""}${out}${end < flat.length ? "…" : ""}`;
}

/** The body's snippet when it shows a match, else the title's (marked) when that does. */
export function bestSnippet(titleText: string, bodyText: string, terms: string[]): string {
  const body = snippet(bodyText, terms);
  if (body.includes("**") || terms.length === 0) return body;
  const title = snippet(titleText, terms);
  return title.includes("**") ? title : body;
}
