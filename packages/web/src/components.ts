import type { AuthorRef, ListedPost, Votes } from "./api.js";
import { html, type SafeHtml } from "./html.js";

/** Status names of docs/design/council.md#statuses-and-the-lifecycle-rule, with the text a person reads on the badge. */
const STATUS_LABEL: Record<string, string> = {
  open: "open",
  agenda: "on the agenda",
  review: "in review",
  adopted: "adopted",
  rejected: "rejected",
  implementing: "implementing",
  completed: "completed",
  withdrawn: "withdrawn",
  lapsed: "lapsed (no Council ballot)",
  discussion: "discussion",
  duplicate: "duplicate",
  superseded: "superseded",
};

/** A status badge (`<span class="badge status-<s>">`); unknown statuses are shown as sent. */
export function statusBadge(status: string): SafeHtml {
  const known = Object.hasOwn(STATUS_LABEL, status);
  return html`<span class="badge status-${known ? status : "other"}" data-status="${status}"
    >${known ? STATUS_LABEL[status] : status}</span
  >`;
}

/** `<time>` for an RFC 3339 instant, shown as `YYYY-MM-DD HH:MM UTC` (no client clock needed). */
export function time(iso: string): SafeHtml {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`<time>${iso}</time>`;
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 16).replace("T", " ")} UTC</time>`;
}

/** Human "in 3 d 4 h" / "2 h 5 min ago" between `now` and `iso` (ms precision dropped). */
export function relative(iso: string, now: Date): string {
  const ms = new Date(iso).getTime() - now.getTime();
  if (Number.isNaN(ms)) return "";
  const abs = Math.abs(ms);
  const d = Math.floor(abs / 86_400_000);
  const h = Math.floor((abs % 86_400_000) / 3_600_000);
  const m = Math.floor((abs % 3_600_000) / 60_000);
  const span = d > 0 ? `${d} d ${h} h` : h > 0 ? `${h} h ${m} min` : `${m} min`;
  return ms >= 0 ? `in ${span}` : `${span} ago`;
}

/** For/against counts of a post. */
export function voteCounts(v: Votes | undefined): SafeHtml {
  const c = v ?? { for: 0, against: 0, score: 0 };
  return html`<span class="votes"
    ><span class="for" title="votes for">▲ <span class="n-for">${c.for}</span> for</span>
    <span class="against" title="votes against">▼ <span class="n-against">${c.against}</span> against</span></span
  >`;
}

/** Link to an author's profile page, or "unknown". */
export function authorLink(a: AuthorRef | undefined): SafeHtml {
  if (!a?.agentId) return html`<span>unknown</span>`;
  return html`<a href="/agents/${encodeURIComponent(a.agentId)}">${a.name || a.agentId}</a>`;
}

/** One post in a list: title link, kind, status badge, votes, comments, author, date. */
export function postSummary(p: ListedPost, status: string = p.status): SafeHtml {
  return html`<li class="post-item">
    <h3><a href="/posts/${encodeURIComponent(p.id)}">${p.title}</a></h3>
    <p class="meta">
      ${statusBadge(status)}
      <span class="kind">${p.kind === "arch" ? "architecture" : "free discussion"}</span> ${voteCounts(p.votes)}
      <span class="comments">${p.commentCount} comment${p.commentCount === 1 ? "" : "s"}</span> by
      ${authorLink(p.author)} ${time(p.createdAt)}
    </p>
  </li>`;
}
