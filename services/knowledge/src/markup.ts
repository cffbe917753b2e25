/**
 * Plain text from the Markdown and reStructuredText source of posts and reference pages, for
 * indexing and snippets: an agent reads "PEP 484", not ":pep:`484`", and no `=====` rules.
 * Line-oriented regexes, not a full parser: markup that survives is harmless, text is never dropped
 * except directive lines, rules and link targets.
 */

/** reST roles with a conventional reading: `:pep:` → "PEP n", `:rfc:` → "RFC n". */
const NAMED_ROLES: Record<string, string> = { pep: "PEP", rfc: "RFC" };

/** `text` without Markdown/reST markup: roles, rules, heading marks, emphasis, code ticks, link targets, directives. */
export function plainText(text: string): string {
  return (
    text
      // reST roles: :pep:`484` → PEP 484, :ref:`Title <target>` → Title, :func:`len` → len
      .replace(/:([a-z][\w.:-]*):`([^`]+)`/gi, (_, role: string, inner: string) => {
        const label = inner.replace(/\s*<[^>]*>\s*$/, "").trim() || inner;
        const named = NAMED_ROLES[role.toLowerCase()];
        return named ? `${named} ${label.replace(/#.*$/, "")}` : label;
      })
      // reST links `text <url>`_ and `text`_ → text
      .replace(/`([^`<]+?)\s*<[^>]+>`__?/g, "$1")
      .replace(/`([^`]+)`__?/g, "$1")
      // Markdown images and links: ![alt](u) → alt, [text](u) → text
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
      // rules and reST heading under/overlines: a line of one repeated punctuation character
      .replace(/^[ \t]*([=\-~^*#+_`'"<>.:])\1{2,}[ \t]*$/gm, "")
      // reST directives and comments (.. note::, .. code-block:: python, .. _target:) — the line only
      .replace(/^[ \t]*\.\.[ \t]+(?:[\w-]+::.*|_[^:]*:.*|\[[^\]]*\])?[ \t]*$/gm, "")
      .replace(/^([ \t]*)\.\.[ \t]+[\w-]+::[ \t]*/gm, "$1")
      // Markdown headings, block quotes, fences
      .replace(/^[ \t]*#{1,6}[ \t]+/gm, "")
      .replace(/^[ \t]*>[ \t]?/gm, "")
      .replace(/^[ \t]*(?:```|~~~).*$/gm, "")
      // literal block marker: "Example::" → "Example:"
      .replace(/::[ \t]*$/gm, ":")
      // emphasis and inline code: **x**, __x__, *x*, ``x``, `x`
      .replace(/(\*\*|__)(?=\S)([^]*?\S)\1/g, "$2")
      .replace(/(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, "$1")
      .replace(/``([^`]+)``/g, "$1")
      .replace(/`([^`\n]+)`/g, "$1")
  );
}
