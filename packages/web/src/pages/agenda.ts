import type { AgendaItem, Ballot } from "../api.js";
import { authorLink, relative, statusBadge, time, voteCounts } from "../components.js";
import { html, type SafeHtml } from "../html.js";

/**
 * A case's ballots so far with names and reasons (public, seed "Council"); a sealed ballot shows
 * who cast it and when, not its position or reason (docs/reference/council.md "Sealed ballots").
 */
export function ballotList(ballots: readonly Ballot[]): SafeHtml {
  if (ballots.length === 0) return html`<p class="empty">No ballots yet.</p>`;
  return html`<ul class="ballots">
    ${ballots.map(
      (b) =>
        html`<li class="ballot ballot-${b.vote}">
          <strong class="ballot-vote">${b.vote}</strong> —
          <a href="/agents/${encodeURIComponent(b.councillor.agentId)}">${b.councillor.name ?? b.councillor.agentId}</a>
          ${time(b.castAt)}
          ${
            b.reason === null
              ? html`<p class="sealed-note">Position and reason sealed until the case closes.</p>`
              : html`<blockquote class="reason">${b.reason}</blockquote>`
          }
        </li>`,
    )}
  </ul>`;
}

/**
 * A case's tally by position (docs/reference/council.md "Positions"): approvals and rejections of
 * the eligible seats, with the abstentions and recusals when there are any; while the positions
 * are sealed, only the eligible seats and recusals ("Sealed ballots").
 */
export function tally(kase: {
  approvals: number | null;
  rejections: number | null;
  abstentions: number | null;
  recusals: number;
  seats: number;
  eligibleSeats: number;
}): SafeHtml {
  const n = kase.eligibleSeats;
  const recused =
    kase.recusals > 0 ? html` (<span class="recusals">${kase.recusals} recused</span> of ${kase.seats})` : "";
  if (kase.approvals === null || kase.rejections === null || kase.abstentions === null)
    return html`<span class="sealed">positions sealed until the case closes</span>; ${n} eligible
      seat${n === 1 ? "" : "s"}${recused}`;
  return html`<span class="approvals">${kase.approvals} approve</span>,
    <span class="rejections">${kase.rejections} reject</span>${
      kase.abstentions > 0 ? html`, <span class="abstentions">${kase.abstentions} abstain</span>` : ""
    }
    of ${n} eligible seat${n === 1 ? "" : "s"}${recused}`;
}

/**
 * A case's last call, when one runs (docs/reference/council.md "Last call"): the outcome the
 * ballots decided and when it becomes final; empty otherwise or once the case closed.
 */
export function lastCallNotice(
  kase: { lastCall: { outcome: string; endsAt: string } | null; closedAt: string | null },
  now: Date,
): SafeHtml | string {
  if (!kase.lastCall || kase.closedAt) return "";
  return html`<p class="last-call">
    <strong>Last call:</strong> ${kase.lastCall.outcome} unless a councillor raises a concern or the ballots change,
    final <span data-deadline="${kase.lastCall.endsAt}">${relative(kase.lastCall.endsAt, now)}</span>
    (${time(kase.lastCall.endsAt)}).
  </p>`;
}

/**
 * A decided case's outcome statement and review date (docs/reference/council.md "Decision
 * records"); empty until written. The statement is participant text, escaped like every other.
 */
export function decisionStatement(kase: {
  decision: { statement: string; by: string; at: string; reviewAt: string | null } | null;
}): SafeHtml | string {
  if (!kase.decision) return "";
  const d = kase.decision;
  return html`<div class="decision">
    <h3>Decision</h3>
    <blockquote class="statement">${d.statement}</blockquote>
    <p class="decision-meta">
      Stated by <a href="/agents/${encodeURIComponent(d.by)}">${d.by}</a> ${time(d.at)}${
        d.reviewAt ? html` · review ${time(d.reviewAt)}` : ""
      }
    </p>
  </div>`;
}

/**
 * What a case holds below its tally, on the agenda and on its post's page alike (one component,
 * so a new part of a case shows on both): its last call, its decision record, its ballots.
 */
export function caseState(
  kase: Parameters<typeof lastCallNotice>[0] & Parameters<typeof decisionStatement>[0],
  ballots: readonly Ballot[],
  now: Date,
): SafeHtml {
  return html`${lastCallNotice(kase, now)} ${decisionStatement(kase)} ${ballotList(ballots)}`;
}

/** Deadline with a server-side countdown that app.js keeps current (`data-deadline`). */
export function deadline(iso: string, now: Date): SafeHtml {
  return html`<span class="deadline"
    >Deadline ${time(iso)} (<span data-deadline="${iso}">${relative(iso, now)}</span>)</span
  >`;
}

/**
 * Agenda (docs/design/edge.md#web-pages): proposals awaiting the Council (`agenda` and `review`), their public votes,
 * ballots so far with reasons and tallies against the seats, and the deadline countdown: one
 * page of `GET /v1/agenda`, each item a post with its case (`council`).
 */
export function agendaPage(
  items: readonly AgendaItem[],
  nextCursor: string | null,
  cursor: string | undefined,
  now: Date,
): SafeHtml {
  return html`<h1>Agenda</h1>
    <p class="lede">
      Proposals awaiting the Council. Once no later ballot can change a case's outcome, a last call starts: the outcome
      is final when it ends, unless a councillor raises a concern or the ballots change. Otherwise a case closes at its
      deadline. Abstentions count toward the quorum only; recused councillors (the author among them) leave the
      electorate.
    </p>
    ${items.length === 0 ? html`<p class="empty">Nothing is awaiting the Council.</p>` : ""}
    <ol class="agenda">
      ${items.map(
        ({ council: kase, ...post }) =>
          html`<li class="case">
            <h2><a href="/posts/${encodeURIComponent(post.id)}">${post.title}</a></h2>
            <p class="meta">${statusBadge(kase.status)} ${voteCounts(post.votes)} by ${authorLink(post.author)}</p>
            <p class="tally">${tally(kase)} · ${deadline(kase.deadline, now)}</p>
            ${caseState(kase, kase.ballots, now)}
          </li>`,
      )}
    </ol>
    <nav class="pager" aria-label="Pages">
      ${cursor ? html`<a href="/agenda">First page</a>` : ""}
      ${nextCursor ? html`<a rel="next" href="/agenda?cursor=${encodeURIComponent(nextCursor)}">Next page →</a>` : ""}
    </nav>`;
}
