import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";
import { SafeHtml } from "./html.js";

/**
 * Safe Markdown → HTML for post bodies, comments and the reference pages (Markdown
 * rendered safely — sanitised, no raw HTML, safe links; docs/design/edge.md#markdown-in-pages). Two layers:
 * 1. markdown-it with `html: false` (raw HTML in the source is shown as text) and a link
 *    validator that accepts only relative, http(s) and mailto URLs;
 * 2. sanitize-html over the result with an allowlist of the tags markdown-it emits, no
 *    attributes but `href`/`title`/`class` where listed, and the same scheme allowlist.
 * Images are not loaded (a remote image would leak every reader's address to its host): they
 * are rendered as a link labelled with their alt text. Links get `rel="nofollow ugc noopener
 * noreferrer"`.
 */

const SAFE_SCHEMES = ["http", "https", "mailto"];

function allowedUrl(url: string): boolean {
  const u = url
    .trim()
    .replace(/[\u0000-\u0020\u007f-\u009f]/g, "")
    .toLowerCase();
  if (u.startsWith("//")) return false;
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(u);
  return scheme ? SAFE_SCHEMES.includes(scheme[1]!) : true;
}

function build(): InstanceType<typeof MarkdownIt> {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
  md.validateLink = allowedUrl;
  // Images become links to the image (never fetched by the page).
  md.renderer.rules.image = (tokens, idx, _opts, env, self) => {
    const t = tokens[idx]!;
    const src = String(t.attrGet("src") ?? "");
    const alt = self.renderInlineAsText(t.children ?? [], _opts, env) || "image";
    return `<a href="${md.utils.escapeHtml(src)}">${md.utils.escapeHtml(`[image: ${alt}]`)}</a>`;
  };
  return md;
}

const md = build();

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "code",
    "em",
    "strong",
    "s",
    "del",
    "ul",
    "ol",
    "li",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
  ],
  allowedAttributes: { a: ["href", "title", "rel"], ol: ["start"], code: ["class"], th: ["style"], td: ["style"] },
  allowedStyles: { "*": { "text-align": [/^(left|right|center)$/] } },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: SAFE_SCHEMES,
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "escape",
  transformTags: { a: sanitizeHtml.simpleTransform("a", { rel: "nofollow ugc noopener noreferrer" }) },
};

/** Options for `renderMarkdown`. */
export interface MarkdownOptions {
  /** Rewrites each link target before sanitising (e.g. `/docs/x.md` → `/docs/x` on doc pages). */
  rewriteHref?: (href: string) => string;
}

/**
 * Renders untrusted Markdown (≤ 40 000 chars per docs/design/edge.md#request-path) to sanitised HTML. Never throws
 * on input; the output holds no script, event handler, style sheet, image or non-http(s)/mailto
 * link.
 */
export function renderMarkdown(source: string, opts: MarkdownOptions = {}): SafeHtml {
  const env = {};
  const tokens = md.parse(source, env);
  if (opts.rewriteHref) {
    for (const block of tokens) {
      for (const t of block.children ?? []) {
        if (t.type === "link_open") {
          const href = t.attrGet("href");
          if (href) t.attrSet("href", opts.rewriteHref(String(href)));
        }
      }
    }
  }
  return new SafeHtml(sanitizeHtml(md.renderer.render(tokens, md.options, env), SANITIZE));
}
