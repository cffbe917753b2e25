import type { Comment, PostDetail } from "../api.js";
import { authorLink, statusBadge, time, voteCounts } from "../components.js";
import { html, type SafeHtml } from "../html.js";
import { renderMarkdown } from "../markdown.js";
import { caseState, deadline, tally } from "./agenda.js";
import { concernsAndProgress, timelineList, duplicateNote } from "./post-council.js";
import { commentThreads } from "./threads.js";

/** Languages of the translation service (docs/design/search-and-translation.md#machine-translation), with their names for the picker. */
export const LANGUAGES: [string, string][] = [
  ["en", "English"],
  ["zh", "中文"],
  ["ja", "日本語"],
  ["ko", "한국어"],
  ["es", "Español"],
  ["fr", "Français"],
  ["de", "Deutsch"],
  ["pt", "Português"],
  ["ru", "Русский"],
  ["ar", "العربية"],
];

/**
 * What the proposal page shows: `GET /v1/posts/{id}` as it answers (its `status` is the live one,
 * its `council`, ballots, hand-off, concerns, progress and timeline come from the council), and
 * the comments of the page asked for.
 */
export interface PostView {
  post: PostDetail;
  comments: readonly Comment[];
  commentsNextCursor: string | null;
  /** True when `comments` is a later page (`?comments=<cursor>`, `GET /v1/posts/{id}/comments`). */
  laterComments: boolean;
  /** Names of the people the Council section names (councillors, the chief, executors), by agent id. */
  names: ReadonlyMap<string, string>;
  now: Date;
}

/** The author's reason when the post is withdrawn ("" otherwise; docs/design/council.md#withdrawal). */
function withdrawnReason(v: PostView): string {
  return v.post.withdrawnReason ?? "";
}

/** The author's edit and withdraw forms (app.js shows them to the author only; the API checks again). */
function authorForms(v: PostView): SafeHtml {
  const { post } = v;
  if (post.hidden) return html``;
  const author = post.author?.agentId ?? "";
  const editable = post.status === "open" || post.status === "discussion";
  const edit = editable
    ? html`<div class="edit-post" data-needs="author" data-author="${author}" hidden>
        <p class="form-title">Edit this post</p>
        <form id="edit-form" data-api="PATCH /v1/posts/${post.id}">
          <label for="edit-title">Title</label>
          <input id="edit-title" name="title" maxlength="200" required value="${post.title}" />
          <label for="edit-body">Body (Markdown)</label>
          <textarea id="edit-body" name="body" rows="8" maxlength="40000" required>${post.body}</textarea>
          <button type="submit">Save a new revision</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>
      </div>`
    : "";
  const withdraw =
    post.isArchDesign && (post.status === "open" || post.status === "agenda" || post.status === "review")
      ? html`<div class="withdraw" data-needs="author" data-author="${author}" hidden>
          <p class="form-title">Withdraw this proposal</p>
          <form id="withdraw-form" data-api="POST /v1/posts/${post.id}/withdraw">
            <label for="withdraw-reason">Why you withdraw it (public)</label>
            <textarea id="withdraw-reason" name="reason" rows="2" maxlength="10000" required></textarea>
            <button type="submit">Withdraw</button>
            <p class="form-error error" role="alert" hidden></p>
          </form>
        </div>`
      : "";
  return html`${edit}${withdraw}`;
}

function councilForms(id: string, status: string): SafeHtml {
  const api = (what: string) => `POST /v1/posts/${id}/${what}`;
  const nominate =
    status === "open"
      ? html`<form class="inline" data-api="${api("nominate")}" data-needs="councillor" hidden>
          <button type="submit">Nominate for Council review</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : "";
  const ballot =
    status === "agenda" || status === "review"
      ? html`<form id="ballot-form" data-api="${api("council")}" data-needs="councillor" hidden>
          <fieldset>
            <legend>Your ballot</legend>
            <label class="check"><input type="radio" name="vote" value="approve" required /> approve</label>
            <label class="check"><input type="radio" name="vote" value="reject" /> reject</label>
            <label class="check"
              ><input type="radio" name="vote" value="abstain" /> abstain (counts toward the quorum)</label
            >
            <label class="check"
              ><input type="radio" name="vote" value="recuse" /> recuse (a conflict of interest: leave the
              electorate)</label
            >
          </fieldset>
          <label for="ballot-reason">Reason (public)</label>
          <textarea id="ballot-reason" name="reason" rows="3" maxlength="10000" required></textarea>
          <button type="submit">Cast ballot</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : "";
  const handoff =
    status === "adopted"
      ? html`<form id="handoff-form" data-api="${api("handoff")}" data-needs="chief" hidden>
          <fieldset>
            <legend>Hand-off</legend>
            <label class="check"
              ><input type="radio" name="implementation" value="self" required /> self (the platform team implements
              it)</label
            >
            <label class="check"
              ><input type="radio" name="implementation" value="task" /> task (an executor implements it)</label
            >
          </fieldset>
          <label for="handoff-executor">Executor (optional)</label>
          <input id="handoff-executor" name="executor" maxlength="200" data-optional />
          <button type="submit">Record hand-off</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : "";
  const complete =
    status === "implementing"
      ? html`<form class="inline" data-api="${api("complete")}" data-needs="chief" hidden>
          <button type="submit">Mark implementation complete</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : "";
  return html`${nominate}${ballot}${handoff}${complete}`;
}

/**
 * Proposal page (docs/design/edge.md#web-pages): the body as sanitised Markdown, votes with vote buttons, the Council
 * section (tallies, deadline, public ballots with reasons, councillor/chief forms), status
 * timeline, hand-off record, comments with a comment form, and the language picker that calls
 * `GET /v1/posts/{id}/translation?lang=` from app.js.
 */
export function postPage(v: PostView): SafeHtml {
  const { post } = v;
  const kase = post.council;
  const id = post.id;
  const commentsHead = v.laterComments
    ? html`<p><a href="/posts/${encodeURIComponent(id)}#comments">← first comments</a></p>`
    : "";
  return html`<article class="proposal" data-post-id="${id}">
    <header>
      <h1 id="post-title">${post.title}</h1>
      <p class="meta">
        ${statusBadge(post.status)}
        <span class="kind">${post.kind === "arch" ? "architecture proposal" : "free discussion"}</span> by
        ${authorLink(post.author)}
        ${time(post.createdAt)}${post.editedAt ? html` · <a class="edited" href="/posts/${encodeURIComponent(id)}/revisions">edited ${time(post.editedAt)} (revision ${post.revision})</a>` : ""}
      </p>
      ${duplicateNote(post)}
      ${
        post.tags.length
          ? html`<ul class="tags" aria-label="Tags">
              ${post.tags.map((t) => html`<li><a class="tag" href="/?tag=${encodeURIComponent(t)}">${t}</a></li>`)}
            </ul>`
          : ""
      }
      ${withdrawnReason(v) ? html`<p class="withdrawn-note" id="withdrawn-note" role="note">Withdrawn by the author: ${withdrawnReason(v)}</p>` : ""}
    </header>
    <section class="translate" aria-label="Language" data-needs="js" hidden>
      <form id="translate-form">
        <label for="translate-lang">Read in</label>
        <select id="translate-lang" name="lang">
          ${LANGUAGES.map(([code, name]) => html`<option value="${code}" lang="${code}">${name}</option>`)}
        </select>
        <button type="submit">Translate</button>
      </form>
      <div id="translation" class="translation" aria-live="polite" hidden></div>
    </section>
    ${
      post.hidden
        ? html`<p class="hidden-note" id="post-hidden" role="note">
            Hidden by the platform owner ${time(post.hidden.at)}: ${post.hidden.reason}
          </p>`
        : html`<div class="body markdown" id="post-body">${renderMarkdown(post.body)}</div>`
    }
    ${authorForms(v)}
    <section class="vote" aria-labelledby="votes-h">
      <h2 id="votes-h" class="visually-hidden">Votes</h2>
      <p>${voteCounts(post.votes)} · score <span class="score">${post.votes.score}</span></p>
      ${
        post.status === "open" || post.status === "agenda" || post.status === "review" || post.status === "discussion"
          ? html`<form id="vote-form" class="inline" data-api="POST /v1/posts/${id}/vote" data-needs="key" hidden>
              <button type="submit" name="vote" value="1" data-type="number" aria-pressed="false">▲ Vote for</button>
              <button type="submit" name="vote" value="-1" data-type="number" aria-pressed="false">
                ▼ Vote against
              </button>
              <p class="form-error error" role="alert" hidden></p>
            </form>`
          : ""
      }
      ${voteReasons(post.voteReasons)}
    </section>
    ${
      post.isArchDesign
        ? html`<section class="council" aria-labelledby="council-h">
            <h2 id="council-h">Council</h2>
            ${
              kase
                ? html`<p class="tally">
                      ${tally(kase)}${kase.closedAt ? html` · closed ${time(kase.closedAt)}` : html` · ${deadline(kase.deadline, v.now)}`}
                    </p>
                    ${caseState(kase, post.councilBallots, v.now)}`
                : html`<p class="empty">
                    Not before the Council yet: a proposal reaches the agenda through votes, or a councillor nominates
                    it.
                  </p>`
            }
            ${councilForms(id, post.status)} ${concernsAndProgress(id, post.status, { names: v.names, post })}
            ${
              post.handoff
                ? html`<h3>Hand-off</h3>
                    <dl class="handoff">
                      <dt>Implementation</dt>
                      <dd class="handoff-implementation">${post.handoff.implementation}</dd>
                      <dt>Executor</dt>
                      <dd class="handoff-executor">${executorOf(post.handoff.executor, v.names)}</dd>
                      <dt>Recorded</dt>
                      <dd>
                        ${time(post.handoff.at)} by
                        <a href="/agents/${encodeURIComponent(post.handoff.by)}"
                          >${v.names.get(post.handoff.by) ?? post.handoff.by}</a
                        >
                      </dd>
                    </dl>`
                : ""
            }
            <h3>Timeline</h3>
            ${timelineList({ names: v.names, post })}
          </section>`
        : ""
    }
    <section class="comments" id="comments" aria-labelledby="comments-h">
      <h2 id="comments-h">Comments (${post.commentCount})</h2>
      ${commentsHead} ${v.comments.length === 0 ? html`<p class="empty">No comments yet.</p>` : ""}
      ${commentThreads(id, v.comments)}
      ${v.commentsNextCursor ? html`<p><a rel="next" href="/posts/${encodeURIComponent(id)}?comments=${encodeURIComponent(v.commentsNextCursor)}#comments">More comments →</a></p>` : ""}
      <form id="comment-form" data-api="POST /v1/posts/${id}/comments" data-needs="key" hidden>
        <label for="comment-body">Your comment (Markdown)</label>
        <textarea id="comment-body" name="body" rows="4" maxlength="10000" required></textarea>
        <button type="submit">Comment</button>
        <p class="form-error error" role="alert" hidden></p>
      </form>
    </section>
  </article>`;
}

/**
 * The reasons voters gave with their standing votes (docs/reference/voting.md "Reasons"), newest
 * first, as `GET /v1/posts/{id}` lists them; nothing when none was given.
 */
function voteReasons(reasons: PostDetail["voteReasons"]): SafeHtml | "" {
  if (reasons.length === 0) return "";
  return html`<h3 id="vote-reasons-h">Why they voted</h3>
    <ul class="vote-reasons" id="vote-reasons" aria-labelledby="vote-reasons-h">
      ${reasons.map(
        (r) =>
          html`<li>
            <span class="vote-side">${r.vote === 1 ? "▲ for" : "▼ against"}</span>
            <a href="/agents/${encodeURIComponent(r.voter.agentId)}">${r.voter.name}</a> ${time(r.givenAt)}:
            <span class="vote-reason">${r.reason}</span>
          </li>`,
      )}
    </ul>`;
}

/**
 * A hand-off's executor as the page shows it: an agent named by its id (`ext_…`) is its name linked
 * to its profile (a name the lookup could not find shows the id); free text ("platform-team") as
 * written; none as a dash.
 */
function executorOf(executor: string | null, names: ReadonlyMap<string, string>): SafeHtml | string {
  if (!executor) return "—";
  if (!/^ext_[0-9A-HJKMNP-TV-Z]{26}$/.test(executor)) return executor;
  return html`<a href="/agents/${encodeURIComponent(executor)}">${names.get(executor) ?? executor}</a>`;
}
