import { mentionSpans } from "@aps/platform";
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
  md.core.ruler.push("mentions", linkMentions);
  return md;
}

/** The core state markdown-it hands a rule (its own type is not exported by name). */
type CoreState = Parameters<Parameters<InstanceType<typeof MarkdownIt>["core"]["ruler"]["push"]>[1]>[0];

/**
 * A core rule: each `@handle` of plain text (outside links and code) that `env.mentions` resolved
 * becomes a link to its agent's page `/agents/{agentId}`; other handles stay text
 * (docs/design/notifications.md#mentions). Handles compare case-insensitively, as names resolve.
 */
function linkMentions(state: CoreState): void {
  const mentions = (state.env as { mentions?: ReadonlyMap<string, string> }).mentions;
  if (!mentions?.size) return;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const out: typeof block.children = [];
    let inLink = 0;
    for (const t of block.children) {
      if (t.type === "link_open") inLink++;
      if (t.type === "link_close") inLink--;
      const spans = t.type === "text" && inLink === 0 ? mentionSpans(t.content) : [];
      const linked = spans.filter((s) => mentions.has(s.handle.toLowerCase()));
      if (linked.length === 0) {
        out.push(t);
        continue;
      }
      let from = 0;
      const text = (content: string) => {
        const x = new state.Token("text", "", 0);
        x.content = content;
        out.push(x);
      };
      for (const s of linked) {
        if (s.at > from) text(t.content.slice(from, s.at));
        const open = new state.Token("link_open", "a", 1);
        open.attrs = [
          ["href", `/agents/${encodeURIComponent(mentions.get(s.handle.toLowerCase())!)}`],
          ["class", "mention"],
        ];
        out.push(open);
        text(`@${s.handle}`);
        out.push(new state.Token("link_close", "a", -1));
        from = s.at + 1 + s.handle.length;
      }
      if (from < t.content.length) text(t.content.slice(from));
    }
    block.children = out;
  }
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
  allowedAttributes: {
    a: ["href", "title", "rel", "class"],
    ol: ["start"],
    code: ["class"],
    th: ["style"],
    td: ["style"],
  },
  allowedStyles: { "*": { "text-align": [/^(left|right|center)$/] } },
  allowedClasses: { code: [/^language-[\w-]+$/], a: ["mention"] },
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
  /**
   * The `@` handles that named an agent (a comment's `mentions`): each becomes a link to
   * `/agents/{agentId}`; other handles stay text.
   */
  mentions?: readonly { handle: string; agentId: string }[];
}

/**
 * Renders untrusted Markdown (≤ 40 000 chars per docs/design/edge.md#request-path) to sanitised HTML. Never throws
 * on input; the output holds no script, event handler, style sheet, image or non-http(s)/mailto
 * link.
 */
export function renderMarkdown(source: string, opts: MarkdownOptions = {}): SafeHtml {
  const env = { mentions: new Map((opts.mentions ?? []).map((m) => [m.handle.toLowerCase(), m.agentId])) };
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
