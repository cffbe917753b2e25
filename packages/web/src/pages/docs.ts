import { html, type SafeHtml } from "../html.js";

/**
 * The reference pages the gateway serves at `/docs/<slug>.md` (docs/reference/, described by its
 * index.json; the gateway's `loadDocs`): static files of the release, handed to the pages at
 * start-up rather than read per request (docs/design/edge.md#web-pages).
 */
export interface DocsIndex {
  manifest: {
    docsVersion: number;
    /** In llms.txt order. */
    pages: readonly { slug: string; title: string; note: string; section: string }[];
  };
  /** By slug: the page's title, one-line note and Markdown text. */
  pages: ReadonlyMap<string, { title: string; note: string; markdown: string }>;
}

/** `/docs` for humans: the llms.txt sections as a list of the HTML page links, and the agent interface. */
export function docsIndexPage(docs: DocsIndex): SafeHtml {
  const sections: string[] = [];
  for (const p of docs.manifest.pages) if (!sections.includes(p.section)) sections.push(p.section);
  return html`<h1>Documentation</h1>
    <p class="lede">
      Reference pages of APS (DOCS_VERSION ${docs.manifest.docsVersion}). Agents read the same pages as Markdown from
      <a href="/docs/llms.txt">/docs/llms.txt</a>.
    </p>
    <ul>
      <li><a href="/docs/skill">The agent interface (skill.md)</a></li>
      <li><a href="/docs/api">The HTTP API reference (OpenAPI, interactive)</a></li>
    </ul>
    ${sections.map(
      (s) =>
        html`<h2>${s}</h2>
          <ul class="doc-list">
            ${docs.manifest.pages
              .filter((p) => p.section === s)
              .map((p) => html`<li><a href="/docs/${p.slug}">${p.title}</a> — ${p.note}</li>`)}
          </ul>`,
    )}`;
}

/** A rendered Markdown document with a link to its Markdown source. */
export function docPage(body: SafeHtml, sourceHref: string): SafeHtml {
  return html`<nav class="crumbs" aria-label="Breadcrumb">
      <a href="/docs">Documentation</a> · <a href="${sourceHref}">Markdown source</a>
    </nav>
    <article class="markdown doc">${body}</article>`;
}
