import type { PostPage } from "../api.js";
import { postSummary } from "../components.js";
import { html, type SafeHtml } from "../html.js";

/** Query of the home page (validated by `GET /v1/posts`, which it is passed to): the same knobs. */
export interface HomeQuery {
  sort: "hot" | "new";
  kind: "all" | "arch" | "free";
  cursor?: string | undefined;
  /** Only posts carrying every one of these tags (docs/reference/editing.md). */
  tag: string[];
  /** Only posts in one of these statuses. */
  status: string[];
}

function homeHref(q: HomeQuery, cursor?: string): string {
  const p = new URLSearchParams();
  if (q.sort !== "hot") p.set("sort", q.sort);
  if (q.kind !== "all") p.set("kind", q.kind);
  for (const t of q.tag) p.append("tag", t);
  for (const s of q.status) p.append("status", s);
  if (cursor) p.set("cursor", cursor);
  const s = p.toString();
  return s ? `/?${s}` : "/";
}

/**
 * Home (docs/design/edge.md#web-pages): Hot / New tabs, an arch/free filter, the posts with status badges and
 * for/against counts, keyset pagination through the list's opaque `nextCursor`, and the
 * "write a post" form (shown by app.js to a signed-in browser; it calls `POST /v1/posts`, and
 * "Check first" the same as a dry run, docs/design/edge.md#dry-run).
 */
export function homePage(q: HomeQuery, page: PostPage): SafeHtml {
  const tab = (sort: HomeQuery["sort"], label: string) =>
    html`<a href="${homeHref({ ...q, sort, cursor: undefined })}" ${q.sort === sort ? html` aria-current="page"` : ""}
      >${label}</a
    >`;
  const filter = (kind: HomeQuery["kind"], label: string) =>
    html`<a href="${homeHref({ ...q, kind, cursor: undefined })}" ${q.kind === kind ? html` aria-current="page"` : ""}
      >${label}</a
    >`;
  return html`<h1>Proposals</h1>
    <div class="toolbar">
      <nav class="tabs" aria-label="Sort">${tab("hot", "Hot")} ${tab("new", "New")}</nav>
      <nav class="filters" aria-label="Kind">
        ${filter("all", "All")} ${filter("arch", "Architecture")} ${filter("free", "Free discussion")}
      </nav>
    </div>
    ${
      q.tag.length || q.status.length
        ? html`<p class="active-filters">
            Filtered by ${q.tag.map((t) => html`<span class="tag">${t}</span> `)}
            ${q.status.map((st) => html`<span class="badge">${st}</span> `)} ·
            <a href="${homeHref({ ...q, tag: [], status: [], cursor: undefined })}">clear</a>
          </p>`
        : ""
    }
    ${
      page.items.length === 0
        ? html`<p class="empty">No posts here yet.</p>`
        : html`<ol class="posts">
            ${page.items.map((p) => postSummary(p))}
          </ol>`
    }
    <nav class="pager" aria-label="Pages">
      ${q.cursor ? html`<a href="${homeHref({ ...q, cursor: undefined })}">First page</a>` : ""}
      ${page.nextCursor ? html`<a rel="next" href="${homeHref(q, page.nextCursor)}">Next page →</a>` : ""}
    </nav>
    <section class="compose" aria-labelledby="compose-h" data-needs="key" hidden>
      <h2 id="compose-h">Write a post</h2>
      <form id="post-form" data-api="POST /v1/posts" data-then="open-post">
        <label for="post-title">Title</label>
        <input id="post-title" name="title" maxlength="200" required />
        <label for="post-body">Body (Markdown)</label>
        <textarea id="post-body" name="body" rows="10" maxlength="40000" required></textarea>
        <label class="check"
          ><input type="checkbox" name="is_arch_design" data-type="bool" checked /> Architecture proposal (goes through
          heat and the Council)</label
        >
        <button type="submit">Publish</button>
        <button type="submit" data-dry-run="Checked: this post would be accepted as it is. Nothing was published yet.">
          Check first
        </button>
        <p class="form-note" role="status" hidden></p>
        <p class="form-error error" role="alert" hidden></p>
      </form>
    </section>
    <p class="signin-needed" data-needs="nokey">
      To write, vote or comment, <a href="/join">join</a> and sign in with your key.
    </p>`;
}
