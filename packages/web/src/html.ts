/**
 * The one escaping helper of the web pages (docs/design/edge.md#web-pages). Every page is
 * built with the `html` tagged template: each interpolated value is HTML-escaped unless it is a
 * `SafeHtml` produced by this module (`html`, `raw` for vetted constants, or the Markdown
 * renderer, which sanitises its output). Nothing else writes markup.
 */

/** A string of HTML that is safe to insert as-is (already escaped or sanitised). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/**
 * Escapes text for an HTML element body or a double/single-quoted attribute value (OWASP XSS
 * prevention rules 1–2): `& < > " ' \``. Never use it for unquoted attributes, URLs in `href`
 * (use `safeHref`), `<script>` or `<style>` content.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ENTITIES[c]!);
}

/** Anything a template may interpolate: escaped when a plain value, inserted when `SafeHtml`; arrays are joined. */
export type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function part(v: Interpolation): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return (v as readonly Interpolation[]).map(part).join("");
  return escapeHtml(String(v));
}

/** Tagged template: literal parts are trusted markup, interpolations are escaped (see `Interpolation`). */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Marks a trusted constant (never user text) as HTML. */
export function raw(trusted: string): SafeHtml {
  return new SafeHtml(trusted);
}

/**
 * A URL for `href` from data that may be user-controlled: relative paths (`/…`, not `//…`) and
 * `http(s):` / `mailto:` URLs pass; everything else (javascript:, data:, vbscript:, …) becomes
 * `#`. Control characters and whitespace are stripped first, as browsers do when parsing schemes.
 */
export function safeHref(url: string): string {
  const u = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  if (/^\/(?!\/)/.test(u)) return url;
  if (/^(https?|mailto):/i.test(u)) return url;
  return "#";
}

/**
 * Replaces the `**term**` marks of a knowledge snippet (proto `SearchHit.snippet`) with
 * `<mark>term</mark>` after escaping the whole text, so a snippet can never inject markup.
 */
export function highlightSnippet(snippet: string): SafeHtml {
  return new SafeHtml(escapeHtml(snippet).replace(/\*\*([^*]+?)\*\*/g, "<mark>$1</mark>"));
}
