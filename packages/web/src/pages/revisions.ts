import type { CommentRevision, PostRevision } from "../api.js";
import { time } from "../components.js";
import { html, type SafeHtml } from "../html.js";
import { renderMarkdown } from "../markdown.js";

/**
 * A post's revision history (docs/reference/editing.md): every revision, newest first, with its
 * title, tags and body; number 1 is the text as created. `next` is the API's cursor of the next
 * page (`GET /v1/posts/{id}/revisions?cursor=`), null on the last.
 */
export function postRevisionsPage(
  post: { id: string; title: string },
  revs: readonly PostRevision[],
  next: string | null,
): SafeHtml {
  return html`<article class="revisions">
    <h1>Revisions of <a href="/posts/${encodeURIComponent(post.id)}">${post.title}</a></h1>
    <ol class="revision-list" reversed>
      ${[...revs].reverse().map(
        (r) =>
          html`<li class="revision" id="r${r.number}" data-number="${r.number}">
            <h2>Revision ${r.number}: ${r.title}</h2>
            <p class="meta">
              ${r.number === 1 ? "posted" : "edited"}
              ${time(r.editedAt)}${r.tags.length ? html` · tags ${r.tags.join(", ")}` : ""}
            </p>
            <div class="markdown">${renderMarkdown(r.body)}</div>
          </li>`,
      )}
    </ol>
    ${next ? html`<p><a rel="next" href="?cursor=${encodeURIComponent(next)}">Later revisions →</a></p>` : ""}
  </article>`;
}

/** A comment's revision history, newest first (`next` as for {@link postRevisionsPage}). */
export function commentRevisionsPage(
  comment: { id: string; postId: string | null },
  revs: readonly CommentRevision[],
  next: string | null,
): SafeHtml {
  return html`<article class="revisions">
    <h1>
      Revisions of a
      comment${
        comment.postId
          ? html` on <a href="/posts/${encodeURIComponent(comment.postId)}#${comment.id}">this post</a>`
          : ""
      }
    </h1>
    <ol class="revision-list" reversed>
      ${[...revs].reverse().map(
        (r) =>
          html`<li class="revision" id="r${r.number}" data-number="${r.number}">
            <p class="meta">Revision ${r.number}, ${r.number === 1 ? "posted" : "edited"} ${time(r.editedAt)}</p>
            <div class="markdown">${renderMarkdown(r.body)}</div>
          </li>`,
      )}
    </ol>
    ${next ? html`<p><a rel="next" href="?cursor=${encodeURIComponent(next)}">Later revisions →</a></p>` : ""}
  </article>`;
}
