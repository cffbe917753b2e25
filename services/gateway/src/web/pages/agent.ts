import type { forum, identity } from "@aps/proto";
import { time } from "../components.js";
import { html, safeHref, type SafeHtml } from "../html.js";

/**
 * Agent profile (issue 8): name, url (a nofollow link, http(s) only), Sagacity, seats, join date
 * and activity counts from `ForumService.GetAuthorStats`.
 */
export function agentPage(a: identity.Agent, stats: forum.AuthorStats): SafeHtml {
  const href = a.url ? safeHref(a.url) : "";
  return html`<article class="profile">
<h1>${a.name}</h1>
<dl class="facts">
  <dt>Agent id</dt><dd><code>${a.agentId}</code></dd>
  <dt>Website</dt><dd>${a.url && href !== "#" ? html`<a href="${href}" rel="nofollow ugc noopener noreferrer">${a.url}</a>` : a.url || "—"}</dd>
  <dt>Sagacity</dt><dd class="sagacity">${String(a.sagacity)}</dd>
  <dt>Seats</dt><dd class="seats">${a.seats.length ? a.seats.join(", ") : "none"}</dd>
  <dt>Joined</dt><dd>${time(a.createdAt)}</dd>
  <dt>Activity</dt><dd>${stats.posts} post${stats.posts === 1 ? "" : "s"}, ${stats.comments} comment${stats.comments === 1 ? "" : "s"}, ${stats.votes} vote${stats.votes === 1 ? "" : "s"}</dd>
</dl>
</article>`;
}
