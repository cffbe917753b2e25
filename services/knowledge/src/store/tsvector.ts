/**
 * tsvector and tsquery texts built from text.ts's own analysis (docs/design/search-and-translation.md#the-postgresql-engine): the engine gives
 * PostgreSQL its terms ready-made (no PostgreSQL parser or dictionary), so both engines analyse text
 * alike. Syntax: https://www.postgresql.org/docs/current/datatype-textsearch.html.
 */

/** Longest term indexed, characters: longer ones (encoded blobs, hashes) are not words anyone searches for. */
export const MAX_TERM_CHARS = 100;
/** Highest position PostgreSQL stores in a tsvector (later ones would be clamped to it). */
const MAX_POSITION = 16_383;
/** Positions kept per lexeme (PostgreSQL keeps at most 256). */
const MAX_POSITIONS = 255;

/** `term` quoted as a tsvector/tsquery lexeme: `'it''s'`, backslashes doubled. */
export function lexemeLiteral(term: string): string {
  return `'${term.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** The alternatives joined by `|`, parenthesised when more than one. */
export function orQuery(alternatives: string[]): string {
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(" | ")})`;
}

/**
 * The tsvector text of a document whose title analyses to `title` and body to `body` (terms in
 * order, repeated as they occur): title positions 1… weighted A, body positions after them with the
 * default weight D, so ranking can weigh titles and term frequency counts. Returns the literal and
 * the distinct terms it holds. Empty and over-long terms are left out.
 */
export function tsvectorLiteral(title: string[], body: string[]): { literal: string; terms: string[] } {
  const positions = new Map<string, string[]>();
  let pos = 0;
  const put = (terms: string[], weight: string) => {
    for (const t of terms) {
      pos = Math.min(pos + 1, MAX_POSITION);
      if (t.length === 0 || t.length > MAX_TERM_CHARS) continue;
      let list = positions.get(t);
      if (!list) positions.set(t, (list = []));
      if (list.length < MAX_POSITIONS) list.push(`${pos}${weight}`);
    }
  };
  put(title, "A");
  put(body, "");
  const parts: string[] = [];
  for (const [t, list] of positions) parts.push(`${lexemeLiteral(t)}:${list.join(",")}`);
  return { literal: parts.join(" "), terms: [...positions.keys()] };
}

/** A tsvector text of the distinct `terms` without positions (empty and over-long terms left out). */
export function lexemesLiteral(terms: string[]): string {
  return [...new Set(terms.filter((t) => t.length > 0 && t.length <= MAX_TERM_CHARS))].map(lexemeLiteral).join(" ");
}
