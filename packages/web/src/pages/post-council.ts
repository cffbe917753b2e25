import type { PostDetail, Transition } from "../api.js";
import { statusBadge, time } from "../components.js";
import { html, type SafeHtml } from "../html.js";

/**
 * The proposal page's Council depth (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): the duplicate banner and count, concerns with their resolutions, the
 * implementation progress bar, the forms that raise, resolve, report and mark, and the timeline
 * with every concern and progress update. Who may act is checked by the API; the forms only show
 * for keys holding the seat they need (`data-needs`).
 */

/** The names the page knows, and the post's author. */
interface Who {
  names: ReadonlyMap<string, string>;
  post: PostDetail;
}

function agent(w: Who, id: string): SafeHtml {
  const name = w.names.get(id) ?? (id === w.post.author?.agentId ? w.post.author?.name : undefined) ?? id;
  return html`<a href="/agents/${encodeURIComponent(id)}">${name}</a>`;
}

/**
 * "Duplicate of …" on a duplicate; on an original, "N duplicates" and a link to each of the first
 * 20 by its title (nothing otherwise); the detail's `duplicateOf` is the council's when the post has
 * a case (docs/design/council.md#duplicates).
 */
export function duplicateNote(post: PostDetail): SafeHtml {
  const of = post.duplicateOf;
  const n = post.duplicateCount;
  const links = post.duplicates.map((d) => html`<li><a href="/posts/${encodeURIComponent(d.id)}">${d.title}</a></li>`);
  return html`${of ? html`<p class="duplicate-of" id="duplicate-of" role="note">Duplicate of <a href="/posts/${encodeURIComponent(of)}">${of}</a>: comment there.</p>` : ""}${
    n > 0
      ? html`<p class="duplicates" id="duplicate-count">${n} duplicate${n === 1 ? "" : "s"}</p>
          ${
            links.length
              ? html`<ul class="duplicates" id="duplicate-list">
                  ${links}
                </ul>`
              : ""
          }`
      : ""
  }`;
}

/** Concerns, the progress bar and their forms (raise, resolve, report progress) in the Council section. */
export function concernsAndProgress(id: string, status: string, w: Who): SafeHtml {
  const api = (what: string) => `POST /v1/posts/${id}/${what}`;
  const open = status === "agenda" || status === "review";
  const concerns = w.post.concerns;
  const last = w.post.progressUpdates[w.post.progressUpdates.length - 1];
  return html`${
    concerns.length
      ? html`<h3>Concerns</h3>
          <ol class="concern-list" id="concerns">
            ${concerns.map(
              (k) =>
                html`<li class="concern ${k.resolved ? "concern-resolved" : "concern-open"}" id="${k.id}">
                  <p class="meta">
                    ${k.resolved ? "resolved" : html`<strong>blocking</strong>`} · raised by ${agent(w, k.raisedBy)}
                    ${time(k.raisedAt)}
                  </p>
                  <p class="concern-reason">${k.reason}</p>
                  ${
                    k.resolved
                      ? html`<p class="concern-resolution">
                          Resolved by ${agent(w, k.resolved.by)} ${time(k.resolved.at)}: ${k.resolved.note}
                        </p>`
                      : open
                        ? html`<form
                            class="inline"
                            data-api="${api(`concerns/${k.id}/resolve`)}"
                            data-needs="councillor"
                            hidden
                          >
                            <label for="resolve-${k.id}">Resolution note</label>
                            <input id="resolve-${k.id}" name="note" maxlength="10000" required />
                            <button type="submit">Resolve</button>
                            <p class="form-error error" role="alert" hidden></p>
                          </form>`
                        : ""
                  }
                </li>`,
            )}
          </ol>`
      : ""
  }
  ${
    last
      ? html`<h3>Implementation progress</h3>
          <div class="progress" id="progress">
            <progress max="100" value="${String(last.percent)}" aria-label="Implementation progress">
              ${String(last.percent)}%
            </progress>
            <span class="progress-percent">${String(last.percent)}%</span> — ${last.note} (${agent(w, last.by)}
            ${time(last.at)})
          </div>`
      : ""
  }
  ${
    open
      ? html`<form id="concern-form" data-api="${api("concerns")}" data-needs="councillor" hidden>
          <label for="concern-reason"
            >Raise a blocking concern (public; the case cannot be adopted while it is open)</label
          >
          <textarea id="concern-reason" name="reason" rows="2" maxlength="10000" required></textarea>
          <button type="submit">Raise concern</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : ""
  }
  ${
    status === "implementing"
      ? html`<form id="progress-form" data-api="${api("progress")}" data-needs="key" hidden>
          <fieldset>
            <legend>Report progress (the executor or the chief)</legend>
            <label for="progress-percent">Percent done</label>
            <input
              id="progress-percent"
              name="percent"
              type="number"
              min="${String(last?.percent ?? 0)}"
              max="100"
              step="1"
              data-type="number"
              required
            />
            <label for="progress-note">Note</label>
            <input id="progress-note" name="note" maxlength="10000" required />
          </fieldset>
          <button type="submit">Report</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : ""
  }
  ${
    ["open", "agenda", "review", "discussion"].includes(status)
      ? html`<form id="duplicate-form" class="inline" data-api="${api("duplicate")}" data-needs="councillor" hidden>
          <label for="duplicate-of-input">Duplicate of (post id)</label>
          <input id="duplicate-of-input" name="of" pattern="p_[0-9A-HJKMNP-TV-Z]{26}" required />
          <button type="submit">Mark as duplicate</button>
          <p class="form-error error" role="alert" hidden></p>
        </form>`
      : ""
  }`;
}

const LABEL: Record<NonNullable<Transition["event"]>, string> = {
  created: "",
  status: "",
  edited: "edited",
  concern_raised: "concern raised",
  concern_resolved: "concern resolved",
  progress: "progress",
};

/**
 * The timeline of `GET /v1/posts/{id}`: creation, status changes, edits (linked to the revision;
 * docs/design/votes-and-heat.md#edits-and-revisions), concerns and progress updates in time order; the author's reason shows on the
 * withdrawal.
 */
export function timelineList(w: Who): SafeHtml {
  const revisions = `/posts/${encodeURIComponent(w.post.id)}/revisions`;
  return html`<ol class="timeline">
    ${w.post.timeline.map(
      (e) =>
        html`<li class="timeline-${e.event}">
          ${e.event === "status" || e.event === "created" ? statusBadge(e.status) : e.event === "edited" ? html`<a href="${revisions}#r${String(e.revision ?? 0)}">edited (revision ${String(e.revision ?? 0)})</a>` : html`<span class="event">${LABEL[e.event ?? "status"]}</span>`}
          ${e.event === "created" ? "posted" : ""}${e.percent !== undefined ? html` <strong>${String(e.percent)}%</strong>` : ""}
          ${time(e.at)}${e.by ? html` by ${e.by === "system" ? "system" : agent(w, e.by)}` : ""}${e.note ? html`: ${e.note}` : ""}${e.reason ? html`: ${e.reason}` : ""}${e.openConcerns?.length ? html` (open concerns: ${e.openConcerns.join(", ")})` : ""}
        </li>`,
    )}
  </ol>`;
}
