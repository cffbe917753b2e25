/**
 * Markdown protection for machine translation (docs/design/search-and-translation.md#machine-translation: Markdown structure must survive).
 * A document is cut into segments; only `text` segments go to an engine, every other segment is
 * copied byte for byte: fenced code blocks (``` and ~~~, any indentation, unterminated = to the
 * end), indented code blocks (4 spaces or a tab after a blank line), inline code, link and image
 * destinations `](url "title")`, reference definitions, autolinks, bare URLs, HTML tags, block
 * markers at line starts (headings, quotes, list bullets, numbers), emphasis markers (`*`, `_`
 * at word edges) and table pipes.
 */

/** One piece of a document: translatable prose or protected bytes. */
export interface Segment {
  kind: "text" | "keep";
  value: string;
}

const FENCE_OPEN = /^[ \t]*(`{3,}|~{3,})/;

/** Splits `md` into lines of code blocks (kept whole) and the rest (inline-protected). */
function blocks(md: string): Segment[] {
  const lines = md.split(/(?<=\n)/);
  const out: Segment[] = [];
  let prose = "";
  let prevBlank = true;
  const flushProse = () => {
    if (prose) out.push({ kind: "text", value: prose });
    prose = "";
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const close = new RegExp(`^[ \\t]*${marker[0] === "`" ? "`" : "~"}{${marker.length},}[ \\t]*\\r?\\n?$`);
      let code = line;
      let j = i + 1;
      for (; j < lines.length; j++) {
        code += lines[j]!;
        if (close.test(lines[j]!)) break;
      }
      flushProse();
      out.push({ kind: "keep", value: code });
      i = j;
      prevBlank = false;
      continue;
    }
    if (prevBlank && /^( {4}|\t)/.test(line) && line.trim() !== "") {
      // Indented code: this line and every following indented or blank line.
      let code = line;
      let j = i + 1;
      for (; j < lines.length && (/^( {4}|\t)/.test(lines[j]!) || lines[j]!.trim() === ""); j++) code += lines[j]!;
      flushProse();
      out.push({ kind: "keep", value: code });
      i = j - 1;
      prevBlank = code.endsWith("\n\n") || /\n[ \t]*\n$/.test(code);
      continue;
    }
    prose += line;
    prevBlank = line.trim() === "";
  }
  flushProse();
  return out;
}

/** Inline pieces never sent to an engine (order matters: code first, then links and URLs). */
const INLINE_KEEP = new RegExp(
  [
    "(`+)[\\s\\S]*?\\1", // inline code
    '\\]\\([^()\\s]*(?:\\([^()\\s]*\\)[^()\\s]*)*(?:\\s+"[^"]*")?\\)', // ](destination "title")
    "^[ \\t]{0,3}\\[[^\\]\\n]+\\]:[^\\n]*", // reference definition
    "<(?:https?|mailto):[^>\\s]+>", // autolink
    "\\bhttps?:\\/\\/[^\\s<>()\\]]+", // bare URL
    "<\\/?[A-Za-z][^>\\n]*>", // HTML tag
    "^[ \\t]*(?:#{1,6}[ \\t]+|(?:>[ \\t]?)+|[-*+][ \\t]+|\\d{1,9}[.)][ \\t]+)", // block markers
    "^[ \\t]*\\|?(?:[ \\t]*:?-{3,}:?[ \\t]*\\|)+[ \\t]*:?-*:?[ \\t]*$", // table separator row
    "\\|", // table pipes
    "\\*+", // emphasis markers
    "(?<![\\p{L}\\p{N}])_+|_+(?![\\p{L}\\p{N}])", // _emphasis_ markers (not snake_case)
    "^[ \\t]*(?:[-*_][ \\t]*){3,}$", // thematic break
  ].join("|"),
  "gmu",
);

/**
 * Cuts `md` into text and keep segments; joining every `value` gives `md` back exactly.
 * Text segments carry no leading/trailing whitespace (that goes into keep segments), never span
 * a blank line and contain at least one letter; anything else is kept.
 */
export function segment(md: string): Segment[] {
  const out: Segment[] = [];
  const keep = (v: string) => {
    if (!v) return;
    const last = out[out.length - 1];
    if (last?.kind === "keep") last.value += v;
    else out.push({ kind: "keep", value: v });
  };
  const paragraph = (v: string) => {
    const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(v)!;
    keep(m[1]!);
    if (/\p{L}/u.test(m[2]!)) out.push({ kind: "text", value: m[2]! });
    else keep(m[2]!);
    keep(m[3]!);
  };
  // A text segment never spans a blank line: one paragraph (soft line breaks kept) at most.
  const text = (v: string) => v.split(/(\n[ \t]*\n)/).forEach((p, i) => (i % 2 === 1 ? keep(p) : paragraph(p)));
  for (const b of blocks(md)) {
    if (b.kind === "keep") {
      keep(b.value);
      continue;
    }
    let at = 0;
    for (const m of b.value.matchAll(INLINE_KEEP)) {
      text(b.value.slice(at, m.index));
      keep(m[0]);
      at = m.index + m[0].length;
    }
    text(b.value.slice(at));
  }
  return out;
}

/**
 * Translates the prose of `md` with `translate` (given the text segments in order, answering as
 * many strings) and reassembles the document with every protected segment unchanged.
 */
export async function translateMarkdown(
  md: string,
  translate: (texts: string[]) => Promise<string[]>,
): Promise<string> {
  const segs = segment(md);
  const texts = segs.filter((s) => s.kind === "text").map((s) => s.value);
  if (texts.length === 0) return md;
  const done = await translate(texts);
  if (done.length !== texts.length) throw new Error(`engine answered ${done.length} segments for ${texts.length}`);
  let k = 0;
  return segs.map((s) => (s.kind === "text" ? done[k++]! : s.value)).join("");
}
