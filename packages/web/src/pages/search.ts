import type { SearchResult } from "../api.js";
import { html, highlightSnippet, safeHref, type SafeHtml } from "../html.js";

/** Tags offered as one-click filters (docs/design/search-and-translation.md#search-engines: docs; post, arch|free, status; comment). */
const QUICK_TAGS = ["docs", "post", "comment", "arch", "free", "open", "adopted"];

/** A hit's page for humans: `/docs/<slug>.md` → `/docs/<slug>`, `/v1/posts/<id>` → `/posts/<id>`. */
export function hitHref(url: string): string {
  const doc = /^\/docs\/([a-z0-9][a-z0-9-]*)\.md$/.exec(url);
  if (doc) return `/docs/${doc[1]}`;
  const post = /^\/v1\/posts\/([\w-]+)$/.exec(url);
  if (post) return `/posts/${post[1]}`;
  return safeHref(url);
}

/**
 * Search (docs/design/edge.md#web-pages): keywords and tags (all must match) on `GET /v1/knowledge/search`, hits with
 * their snippet's `**term**` marks shown as `<mark>` after escaping. `result` is undefined when
 * nothing was asked yet.
 */
export function searchPage(q: string, tags: string[], result: SearchResult | undefined): SafeHtml {
  const tagsText = tags.join(",");
  const tagHref = (t: string) => {
    const next = tags.includes(t) ? tags.filter((x) => x !== t) : [...tags, t];
    const p = new URLSearchParams();
    if (q) p.set("q", q);
    if (next.length) p.set("tags", next.join(","));
    return `/search?${p.toString()}`;
  };
  return html`<h1>Search</h1>
    <form class="search" action="/search" method="get" role="search">
      <label for="search-q">Keywords (English or Chinese)</label>
      <input id="search-q" name="q" type="search" value="${q}" maxlength="200" />
      <label for="search-tags">Tags (comma-separated, all must match)</label>
      <input id="search-tags" name="tags" value="${tagsText}" maxlength="500" />
      <button type="submit">Search</button>
    </form>
    <nav class="filters" aria-label="Tag filters">
      ${QUICK_TAGS.map((t) => html`<a href="${tagHref(t)}" ${tags.includes(t) ? html` aria-current="true"` : ""}>${t}</a> `)}
    </nav>
    ${
      result === undefined
        ? html`<p class="empty">Search the reference pages and the forum's posts and comments.</p>`
        : html`<p class="count" role="status">${result.total} result${result.total === 1 ? "" : "s"}</p>
            <ol class="hits">
              ${result.hits.map(
                (h) =>
                  html`<li class="hit">
                    <h2>
                      ${
                        h.kind === "comment"
                          ? html`<a href="${hitHref(h.url)}#${h.id}">A comment</a>`
                          : html`<a href="${hitHref(h.url)}">${h.title}</a>`
                      }
                    </h2>
                    <p class="snippet">${highlightSnippet(h.snippet)}</p>
                    <p class="tags">${h.tags.map((t) => html`<span class="tag">${t}</span> `)}</p>
                  </li>`,
              )}
            </ol>`
    }`;
}
