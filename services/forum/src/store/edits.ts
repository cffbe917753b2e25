import type pg from "pg";
import { ApsError, withTransaction, type Clock, type EventOutbox, type Tx } from "@aps/platform";
import type { forum } from "@aps/proto";
import { HIDDEN_TITLE, POST_COLUMNS, toComment, toPost, type CommentRow, type PostRow } from "./rows.js";

/** What an edit of a post changes; an absent field keeps its value. */
export interface PostChanges {
  title?: string | undefined;
  body?: string | undefined;
  /** Already normalized (lowercase, unique, sorted), 0–5. */
  tags?: string[] | undefined;
  /** Set: the edit applies only to this revision (HTTP `If-Match`, docs/reference/editing.md). */
  expectedRevision?: number | undefined;
}

/**
 * `precondition_failed` (412) when `expected` is set and the `what`'s current revision is another:
 * the caller edited from a text someone else's edit (or its own) has replaced since, and nothing is
 * written (docs/design/votes-and-heat.md#edits-and-revisions).
 */
function checkRevision(what: "post" | "comment", current: number, expected: number | undefined): void {
  if (expected !== undefined && expected !== current)
    throw new ApsError(
      "precondition_failed",
      `this ${what} is at revision ${current}, not ${expected}: read it again, apply your change to revision ${current} and send If-Match: "${current}"`,
    );
}

/** Statuses in which the author may edit a post: an open proposal, or a free post at any time (docs/design/votes-and-heat.md#edits-and-revisions). */
const EDITABLE = ["open", "discussion"];

/** Most entries of the forum's part of a post's timeline returned at once (the newest). */
const TIMELINE_MAX = 200;

const sameTags = (a: string[], b: string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

/** EDITS_PER_DAY when the forum's limits name none (docs/design/identity-and-abuse.md#budgets-per-source). */
export const DEFAULT_EDITS_PER_DAY = 50;

/** MAX_REVISIONS when the forum's limits name none: revisions of one post or comment, number 1 (the text as created) included. */
export const DEFAULT_MAX_REVISIONS = 50;

/** The budgets an edit is held to (docs/design/identity-and-abuse.md#budgets-per-source). */
export interface EditBudgets {
  /** Most revisions one post or comment holds (MAX_REVISIONS, ≥ 2); an edit past it is `invalid_state` (409). */
  maxRevisions: number;
  /**
   * Counts one edit of `agentId` on the UTC day of `now` inside the edit's transaction; throws
   * `quota_exceeded` (429, Retry-After to the next UTC midnight) when EDITS_PER_DAY is spent, so
   * the transaction stores nothing.
   */
  countEdit(tx: Tx, agentId: string, now: Date): Promise<void>;
}

/** `invalid_state` for an edit of a `what` that already holds `max` revisions. */
function revisionCap(what: "post" | "comment", max: number): ApsError {
  return new ApsError(
    "invalid_state",
    `this ${what} already has ${max} revisions, the most a post or comment may have (at most ${max} revisions, the first one included); ${what === "post" ? "write a new post or a comment" : "write a new comment"} instead`,
  );
}

/**
 * Edits with history and withdrawal (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions, docs/design/council.md#withdrawal). Each edit
 * locks the row it changes (`FOR UPDATE`), so concurrent edits are numbered one after the other
 * (the revision tables' primary keys would refuse a duplicate number anyway): two edits at once are
 * two revisions, never one lost. Events go through the forum's outbox in the same transaction.
 * Each edit that changes something is held to a revision cap per post or comment and to a daily
 * budget per editor (docs/design/identity-and-abuse.md#budgets-per-source): a refused edit stores nothing (no revision,
 * no timeline entry, no event, so no feed row, inbox item or delivery).
 */
export class ForumEdits {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
    private readonly budgets: EditBudgets,
  ) {}

  /**
   * The author's edit of post `postId`: a new revision with the changed title, body and tags,
   * `forum.post_edited` and a timeline entry. An edit that changes nothing answers the post as it
   * is (no revision, not counted). Throws `not_found`, `forbidden` (not the author), `invalid_state`
   * (a proposal past `open`, hidden by the owner, or already at MAX_REVISIONS), `quota_exceeded`
   * (EDITS_PER_DAY spent), `precondition_failed` (`changes.expectedRevision` set and not the current one).
   */
  async editPost(postId: string, editorId: string, changes: PostChanges): Promise<forum.Post> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const r = await tx.query<PostRow>(`SELECT ${POST_COLUMNS} FROM posts WHERE id = $1 FOR UPDATE`, [postId]);
      const cur = r.rows[0];
      if (!cur) throw new ApsError("not_found", `post ${postId} not found`);
      if (cur.author_id !== editorId) throw new ApsError("forbidden", "only the author may edit a post");
      if (cur.hidden_at) throw new ApsError("invalid_state", "this post was hidden by the platform owner");
      if (!EDITABLE.includes(cur.status))
        throw new ApsError(
          "invalid_state",
          `a proposal can be edited only while it is open; this one is ${cur.status} (the Council decides on a fixed text)`,
        );
      checkRevision("post", cur.revision, changes.expectedRevision);
      const title = changes.title ?? cur.title;
      const body = changes.body ?? cur.body;
      const tags = changes.tags ?? cur.tags;
      if (title === cur.title && body === cur.body && sameTags(tags, cur.tags)) return toPost(cur);
      if (cur.revision >= this.budgets.maxRevisions) throw revisionCap("post", this.budgets.maxRevisions);
      await this.budgets.countEdit(tx, editorId, now);
      const revision = cur.revision + 1;
      const u = await tx.query<PostRow>(
        `UPDATE posts SET title = $2, body = $3, tags = $4, revision = $5, edited_at = $6, updated_at = greatest(updated_at, $6)
         WHERE id = $1 RETURNING ${POST_COLUMNS}`,
        [postId, title, body, tags, revision, now],
      );
      await tx.query(
        "INSERT INTO post_revisions (post_id, number, title, body, tags, edited_at, edited_by) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [postId, revision, title, body, tags, now, editorId],
      );
      await tx.query(
        "INSERT INTO post_events (post_id, event, status, at, by, revision) VALUES ($1, 'edited', $2, $3, $4, $5)",
        [postId, cur.status, now, editorId, revision],
      );
      await this.outbox.publish(tx, "forum.post_edited", {
        occurredAt: now.toISOString(),
        postId,
        editorId,
        revision,
        title,
        tags,
      });
      return toPost(u.rows[0]!);
    });
  }

  /** A page of post `postId`'s revisions, oldest first, after number `after`. Throws `not_found`. */
  async postRevisions(postId: string, limit: number, after: number): Promise<forum.PostRevisions> {
    const r = await this.pool.query<{
      number: number;
      title: string;
      body: string;
      tags: string[];
      edited_at: Date;
      edited_by: string;
      hidden: boolean;
    }>(
      `SELECT v.number, v.title, v.body, v.tags, v.edited_at, v.edited_by, p.hidden_at IS NOT NULL AS hidden
       FROM posts p LEFT JOIN post_revisions v ON v.post_id = p.id AND v.number > $2
       WHERE p.id = $1 ORDER BY v.number LIMIT $3`,
      [postId, after, limit + 1],
    );
    if (r.rows.length === 0) throw new ApsError("not_found", `post ${postId} not found`);
    // A hidden post's text stays withheld in its history too (docs/design/identity-and-abuse.md#hiding-posts-and-comments).
    const rows = r.rows.filter((x) => x.number !== null);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return {
      items: page.map((x) => ({
        number: x.number,
        title: x.hidden ? HIDDEN_TITLE : x.title,
        body: x.hidden ? "" : x.body,
        tags: x.tags,
        editedAt: x.edited_at.toISOString(),
        editedBy: x.edited_by,
      })),
      nextAfter: more ? page[page.length - 1]!.number : 0,
    };
  }

  /**
   * The author's edit of comment `commentId`: a new revision and `forum.comment_edited`. The same
   * body again changes nothing (not counted). Throws `not_found`, `forbidden` (not the author),
   * `invalid_state` (the comment or its post hidden by the owner, or the comment already at
   * MAX_REVISIONS), `quota_exceeded` (EDITS_PER_DAY spent), `precondition_failed` (`expectedRevision`
   * set and not the current one).
   */
  async editComment(
    commentId: string,
    editorId: string,
    body: string,
    expectedRevision?: number,
  ): Promise<forum.Comment> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const r = await tx.query<CommentRow & { post_hidden: boolean }>(
        `SELECT c.*, p.hidden_at IS NOT NULL AS post_hidden FROM comments c JOIN posts p ON p.id = c.post_id
         WHERE c.id = $1 FOR UPDATE OF c`,
        [commentId],
      );
      const cur = r.rows[0];
      if (!cur) throw new ApsError("not_found", `comment ${commentId} not found`);
      if (cur.author_id !== editorId) throw new ApsError("forbidden", "only the author may edit a comment");
      if (cur.hidden_at || cur.post_hidden)
        throw new ApsError("invalid_state", "this comment (or its post) was hidden by the platform owner");
      checkRevision("comment", cur.revision, expectedRevision);
      if (body === cur.body) return toComment(cur);
      if (cur.revision >= this.budgets.maxRevisions) throw revisionCap("comment", this.budgets.maxRevisions);
      await this.budgets.countEdit(tx, editorId, now);
      const revision = cur.revision + 1;
      const u = await tx.query<CommentRow>(
        "UPDATE comments SET body = $2, revision = $3, edited_at = $4 WHERE id = $1 RETURNING *",
        [commentId, body, revision, now],
      );
      await tx.query(
        "INSERT INTO comment_revisions (comment_id, number, body, edited_at, edited_by) VALUES ($1, $2, $3, $4, $5)",
        [commentId, revision, body, now, editorId],
      );
      await this.outbox.publish(tx, "forum.comment_edited", {
        occurredAt: now.toISOString(),
        commentId,
        postId: cur.post_id,
        editorId,
        revision,
      });
      return toComment(u.rows[0]!);
    });
  }

  /** A page of comment `commentId`'s revisions, oldest first, after number `after`. Throws `not_found`. */
  async commentRevisions(commentId: string, limit: number, after: number): Promise<forum.CommentRevisions> {
    const r = await this.pool.query<{
      number: number | null;
      body: string;
      edited_at: Date;
      edited_by: string;
      hidden: boolean;
      post_id: string;
    }>(
      `SELECT v.number, v.body, v.edited_at, v.edited_by, c.hidden_at IS NOT NULL AS hidden, c.post_id
       FROM comments c LEFT JOIN comment_revisions v ON v.comment_id = c.id AND v.number > $2
       WHERE c.id = $1 ORDER BY v.number LIMIT $3`,
      [commentId, after, limit + 1],
    );
    if (r.rows.length === 0) throw new ApsError("not_found", `comment ${commentId} not found`);
    const rows = r.rows.filter((x) => x.number !== null);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return {
      items: page.map((x) => ({
        number: x.number!,
        body: x.hidden ? "" : x.body,
        editedAt: x.edited_at.toISOString(),
        editedBy: x.edited_by,
      })),
      nextAfter: more ? page[page.length - 1]!.number! : 0,
      postId: r.rows[0]!.post_id,
    };
  }

  /**
   * open → withdrawn for a proposal without a Council case (the council decides and calls this,
   * docs/design/council.md#withdrawal): records the reason, a timeline entry and `forum.post_withdrawn`. Throws
   * `not_found`, `forbidden` (not the author), `invalid_state` (a free post, or no longer open —
   * e.g. the heat rule just moved it onto the agenda).
   */
  async withdrawPost(postId: string, agentId: string, reason: string): Promise<forum.Post> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const r = await tx.query<PostRow>(`SELECT ${POST_COLUMNS} FROM posts WHERE id = $1 FOR UPDATE`, [postId]);
      const cur = r.rows[0];
      if (!cur) throw new ApsError("not_found", `post ${postId} not found`);
      if (cur.author_id !== agentId) throw new ApsError("forbidden", "only the author may withdraw a proposal");
      if (!cur.is_arch_design) throw new ApsError("invalid_state", "free-discussion posts have no lifecycle to leave");
      if (cur.status !== "open")
        throw new ApsError("invalid_state", `only an open proposal can be withdrawn here; this one is ${cur.status}`);
      const u = await tx.query<PostRow>(
        `UPDATE posts SET status = 'withdrawn', withdrawn_reason = $2, updated_at = greatest(updated_at, $3)
         WHERE id = $1 RETURNING ${POST_COLUMNS}`,
        [postId, reason, now],
      );
      await tx.query(
        "INSERT INTO post_events (post_id, event, status, at, by, reason) VALUES ($1, 'withdrawn', 'withdrawn', $2, $3, $4)",
        [postId, now, agentId, reason],
      );
      await this.outbox.publish(tx, "forum.post_withdrawn", {
        occurredAt: now.toISOString(),
        postId,
        authorId: agentId,
        reason,
      });
      return toPost(u.rows[0]!);
    });
  }

  /** The forum's timeline entries of a post (edits, a withdrawal), oldest first; the newest TIMELINE_MAX. */
  async postEvents(postId: string): Promise<forum.PostEvent[]> {
    const r = await this.pool.query<{
      event: string;
      status: string;
      at: Date;
      by: string;
      revision: number | null;
      reason: string | null;
    }>("SELECT * FROM (SELECT * FROM post_events WHERE post_id = $1 ORDER BY seq DESC LIMIT $2) e ORDER BY seq", [
      postId,
      TIMELINE_MAX,
    ]);
    return r.rows.map((x) => ({
      event: x.event,
      status: x.status,
      at: x.at.toISOString(),
      by: x.by,
      revision: x.revision ?? 0,
      reason: x.reason ?? "",
    }));
  }
}
