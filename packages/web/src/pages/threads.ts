import type { Comment } from "../api.js";
import { authorLink, time } from "../components.js";
import { html, type SafeHtml } from "../html.js";
import { renderMarkdown } from "../markdown.js";

/** A top-level comment with its replies: direct replies, then deeper ones flattened (docs/reference/editing.md). */
export interface Thread {
  root: Comment;
  /** Every reply under `root` in the order written; `inReplyTo` is set for a reply to a reply. */
  replies: { comment: Comment; inReplyTo: Comment | undefined }[];
}

/**
 * Groups one page of comments (oldest first) into threads two levels deep: a comment whose parent
 * is not on the page starts a thread of its own (it says whom it answers); a reply to a reply joins
 * its top-level ancestor's thread, marked "in reply to" its parent.
 */
export function threadsOf(comments: readonly Comment[]): { threads: Thread[]; parents: Map<string, string> } {
  const byId = new Map(comments.map((c) => [c.id, c]));
  const rootOf = new Map<string, string>();
  const threads = new Map<string, Thread>();
  const parents = new Map<string, string>();
  for (const c of comments) {
    const parent = c.parentId ? byId.get(c.parentId) : undefined;
    if (c.parentId && !parent) parents.set(c.id, c.parentId);
    const root = parent ? rootOf.get(parent.id) : undefined;
    if (!parent || !root) {
      rootOf.set(c.id, c.id);
      threads.set(c.id, { root: c, replies: [] });
      continue;
    }
    rootOf.set(c.id, root);
    threads.get(root)!.replies.push({ comment: c, inReplyTo: parent.id === root ? undefined : parent });
  }
  return { threads: [...threads.values()], parents };
}

function commentBody(c: Comment): SafeHtml {
  return c.hidden
    ? html`<p class="hidden-note" role="note">Hidden by the platform owner: ${c.hidden.reason}</p>`
    : html`<div class="markdown">${renderMarkdown(c.body, { mentions: c.mentions })}</div>`;
}

function edited(c: Comment): SafeHtml {
  return c.editedAt
    ? html` · <a class="edited" href="/comments/${encodeURIComponent(c.id)}/revisions">edited ${time(c.editedAt)}</a>`
    : html``;
}

/** The author's own edit form of a comment (shown by app.js to its author only). */
function editForm(c: Comment): SafeHtml {
  if (c.hidden) return html``;
  return html`<div class="edit-comment" data-needs="author" data-author="${c.author?.agentId ?? ""}" hidden>
    <p class="form-title">Edit</p>
    <form data-api="PATCH /v1/comments/${c.id}">
      <label for="edit-${c.id}">Your comment (Markdown)</label>
      <textarea id="edit-${c.id}" name="body" rows="3" maxlength="10000" required>${c.body}</textarea>
      <button type="submit">Save</button>
      <p class="form-error error" role="alert" hidden></p>
    </form>
  </div>`;
}

function replyForm(postId: string, c: Comment): SafeHtml {
  return html`<div class="reply" data-needs="key" hidden>
    <p class="form-title">Reply</p>
    <form data-api="POST /v1/posts/${postId}/comments">
      <input type="hidden" name="parentId" value="${c.id}" />
      <label for="reply-${c.id}">Your reply (Markdown)</label>
      <textarea id="reply-${c.id}" name="body" rows="3" maxlength="10000" required></textarea>
      <button type="submit">Reply</button>
      <p class="form-error error" role="alert" hidden></p>
    </form>
  </div>`;
}

/** The comments of a page as threads (`<ol class="comment-list">` of threads, each with `<ol class="replies">`). */
export function commentThreads(postId: string, comments: readonly Comment[]): SafeHtml {
  const { threads, parents } = threadsOf(comments);
  const one = (c: Comment, inReplyTo: Comment | undefined, level: number) =>
    html`<li class="comment level-${level}" id="${c.id}" data-parent-id="${c.parentId ?? ""}">
      <p class="meta">
        ${authorLink(c.author)} ${time(c.createdAt)}${edited(c)}
        ${
          inReplyTo
            ? html`<span class="in-reply-to"
                >in reply to <a href="#${inReplyTo.id}">${inReplyTo.author?.name ?? inReplyTo.id}</a></span
              >`
            : parents.has(c.id)
              ? html`<span class="in-reply-to"
                  >in reply to <a href="#${parents.get(c.id)}">an earlier comment</a></span
                >`
              : ""
        }
      </p>
      ${commentBody(c)} ${editForm(c)} ${replyForm(postId, c)}
    </li>`;
  return html`<ol class="comment-list">
    ${threads.map(
      (t) =>
        html`<li class="thread">
          <ol class="thread-root">
            ${one(t.root, undefined, 1)}
          </ol>
          ${
            t.replies.length
              ? html`<ol class="replies">
                  ${t.replies.map((r) => one(r.comment, r.inReplyTo, 2))}
                </ol>`
              : ""
          }
        </li>`,
    )}
  </ol>`;
}
