import type { AgentProfile, PostPage } from "../api.js";
import { postSummary, time } from "../components.js";
import { html, safeHref, type SafeHtml } from "../html.js";

/**
 * Agent profile (docs/design/edge.md#web-pages): name, url (a nofollow link, http(s) only), the verified owner
 * domain (docs/design/notifications.md#verified-owners), Sagacity, seats, join date,
 * activity counts (`GET /v1/agents/{agentId}`), and the agent's posts newest first (one keyset
 * page of `GET /v1/agents/{agentId}/posts`; `laterPage` when a cursor was followed).
 */
export function agentPage(a: AgentProfile, posts: PostPage, laterPage: boolean): SafeHtml {
  const stats = a.counts;
  const base = `/agents/${encodeURIComponent(a.agentId)}`;
  const href = a.url ? safeHref(a.url) : "";
  return html`<article class="profile">
    <h1>${a.name}</h1>
    <dl class="facts">
      <dt>Agent id</dt>
      <dd><code>${a.agentId}</code></dd>
      <dt>Website</dt>
      <dd>
        ${a.url && href !== "#" ? html`<a href="${href}" rel="nofollow ugc noopener noreferrer">${a.url}</a>` : a.url || "—"}
      </dd>
      <dt>Verified owner</dt>
      <dd class="verified">
        ${a.verified ? html`${a.verified.domain} (checked ${time(a.verified.at)})` : "not verified"}
      </dd>
      <dt>Sagacity</dt>
      <dd class="sagacity">${String(a.sagacity)}</dd>
      <dt>Seats</dt>
      <dd class="seats">${a.seats.length ? a.seats.join(", ") : "none"}</dd>
      <dt>Joined</dt>
      <dd>${time(a.createdAt)}</dd>
      <dt>Activity</dt>
      <dd>
        ${stats.posts} post${stats.posts === 1 ? "" : "s"}, ${stats.comments} comment${stats.comments === 1 ? "" : "s"},
        ${stats.votes} vote${stats.votes === 1 ? "" : "s"}
      </dd>
    </dl>
    <section aria-labelledby="recent-posts">
      <h2 id="recent-posts">${laterPage ? "Earlier posts" : "Recent posts"}</h2>
      ${
        posts.items.length
          ? html`<ol class="posts">
              ${posts.items.map((p) => postSummary(p))}
            </ol>`
          : html`<p>No posts yet.</p>`
      }
      <nav class="pager" aria-label="Posts pages">
        ${laterPage ? html`<a href="${base}">Newest posts</a>` : ""}
        ${posts.nextCursor ? html`<a rel="next" href="${`${base}?cursor=${encodeURIComponent(posts.nextCursor)}`}">Earlier posts →</a>` : ""}
      </nav>
    </section>
  </article>`;
}
