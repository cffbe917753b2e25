import type pg from "pg";
import {
  ApsError,
  decodeTupleCursor,
  encodeTupleCursor,
  firstCodePoints,
  LIMITS,
  PG_TIMESTAMPTZ_TEXT,
  withTransaction,
  type Clock,
  type EventOutbox,
} from "@aps/platform";
import type { forum } from "@aps/proto";
import { decideFlags, type ReviewDecisionKind } from "./flags.js";

/** A post id or a comment id as the queue's cursor carries it (prefix + ULID). */
const TARGET_ID = /^[pc]_[0-9A-HJKMNP-TV-Z]{26}$/;

/** A row of the queue's union of posts and comments. */
interface QueueRow {
  kind: "post" | "comment";
  id: string;
  post_id: string;
  title: string;
  body: string;
  author_id: string;
  author_name: string;
  hidden_at: Date;
  hidden_text: string;
  hidden_reason: string | null;
}

/** A `flags` row as the queue reads it. */
interface FlagRow {
  target_id: string;
  flagger_id: string;
  reason: string;
  text: string;
  source: string | null;
  counted: boolean;
  flagged_at: Date;
  decided_at: Date | null;
}

/** The decision columns of a target, read under its row lock. */
interface TargetRow {
  post_id: string;
  author_id: string;
  hidden: boolean;
  hidden_reason: string | null;
  hidden_by_flags: boolean;
  flags_decision: ReviewDecisionKind | null;
  flags_decided_at: Date | null;
  flags_decision_reason: string | null;
}

/** `posts` or `comments` for a `p_…` or `c_…` id. */
function tableOf(id: string): "posts" | "comments" {
  return id.startsWith("c_") ? "comments" : "posts";
}

/**
 * The platform owner's review queue (docs/design/identity-and-abuse.md#review-queue): the posts
 * and comments the flags hid (`hidden_by_flags`, FlagStore in store/flags.ts) and the owner has
 * not decided on yet, oldest hidden first, and the owner's decision on each: `restore` (shown
 * again, its flags decided and weightless), `keep_hidden` or `suspend_author` (hidden, out of the
 * queue; the gateway suspends the author through identity). Each decision is one transaction with
 * its `forum.content_reviewed` event, and a restore's `forum.post_moderated` (hidden false).
 */
export class ReviewQueue {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
  ) {}

  /**
   * One keyset page of at most `limit` targets, ordered by (hidden_at, id), after `cursor` (""
   * for the first page; else a `nextCursor` of this list, `invalid_request` for anything else).
   * Each carries its flags oldest first and its author's count of content hidden by flags and
   * not restored (awaiting review, kept hidden, or hidden with a suspension). Reads the partial
   * indexes `posts_review_queue`, `comments_review_queue` (the page), the flags' primary key and
   * `*_flag_hidden_author` (the counts): a few index ranges, whatever the forum's size.
   */
  async list(limit: number, cursor: string): Promise<forum.ListReviewQueueResponse> {
    const after = cursor
      ? decodeTupleCursor(cursor, 2, [PG_TIMESTAMPTZ_TEXT, (x) => TARGET_ID.test(x)])
      : ["-infinity", ""];
    const r = await this.pool.query<QueueRow>(
      `SELECT * FROM (
         (SELECT 'post' AS kind, id, id AS post_id, title, body, author_id, author_name, hidden_at,
                 hidden_at::text AS hidden_text, hidden_reason
            FROM posts WHERE hidden_by_flags AND (hidden_at, id) > ($1::timestamptz, $2)
            ORDER BY hidden_at, id LIMIT $3)
         UNION ALL
         (SELECT 'comment', c.id, c.post_id, p.title, c.body, c.author_id, c.author_name, c.hidden_at,
                 c.hidden_at::text, c.hidden_reason
            FROM comments c JOIN posts p ON p.id = c.post_id
            WHERE c.hidden_by_flags AND (c.hidden_at, c.id) > ($1::timestamptz, $2)
            ORDER BY c.hidden_at, c.id LIMIT $3)
       ) q ORDER BY hidden_at, id LIMIT $3`,
      [after[0], after[1], limit + 1],
    );
    const more = r.rows.length > limit;
    const rows = more ? r.rows.slice(0, limit) : r.rows;
    if (rows.length === 0) return { items: [], nextCursor: "" };
    const ids = rows.map((row) => row.id);
    const authors = [...new Set(rows.map((row) => row.author_id))];
    const [flags, counts] = await Promise.all([
      this.pool.query<FlagRow>(
        `SELECT target_id, flagger_id, reason, text, source, counted, flagged_at, decided_at
           FROM flags WHERE target_id = ANY($1::text[]) ORDER BY flagged_at, flagger_id`,
        [ids],
      ),
      this.pool.query<{ author_id: string; n: number }>(
        `SELECT author_id, count(*)::int AS n FROM (
           SELECT author_id FROM posts WHERE author_id = ANY($1::text[])
             AND (hidden_by_flags OR flags_decision IN ('keep_hidden', 'suspend_author'))
           UNION ALL
           SELECT author_id FROM comments WHERE author_id = ANY($1::text[])
             AND (hidden_by_flags OR flags_decision IN ('keep_hidden', 'suspend_author'))
         ) a GROUP BY author_id`,
        [authors],
      ),
    ]);
    const flagsOf = new Map<string, forum.ReviewFlag[]>();
    for (const f of flags.rows) {
      const list = flagsOf.get(f.target_id) ?? [];
      list.push({
        flaggerId: f.flagger_id,
        reason: f.reason,
        text: f.text,
        source: f.source ?? `agent:${f.flagger_id}`,
        counted: f.counted,
        flaggedAt: f.flagged_at.toISOString(),
        decidedAt: f.decided_at?.toISOString() ?? "",
      });
      flagsOf.set(f.target_id, list);
    }
    const countOf = new Map(counts.rows.map((c) => [c.author_id, c.n]));
    const now = this.clock.now().getTime();
    const last = rows[rows.length - 1]!;
    return {
      items: rows.map((row) => ({
        targetId: row.id,
        postId: row.post_id,
        title: row.title,
        excerpt: firstCodePoints(row.body, LIMITS.excerptChars),
        authorId: row.author_id,
        authorName: row.author_name,
        authorFlagHidden: countOf.get(row.author_id) ?? 0,
        hiddenAt: row.hidden_at.toISOString(),
        ageSeconds: Math.max(0, Math.floor((now - row.hidden_at.getTime()) / 1000)),
        hiddenReason: row.hidden_reason ?? "",
        flags: flagsOf.get(row.id) ?? [],
      })),
      nextCursor: more ? encodeTupleCursor([last.hidden_text, last.id]) : "",
    };
  }

  /**
   * Records the owner's `decision` on `targetId` (a `p_…` post or `c_…` comment) with `reason`
   * (docs/design/identity-and-abuse.md#review-queue), in one transaction: `restore` shows it again
   * (`hidden_at` and `hidden_reason` cleared), `keep_hidden` and `suspend_author` keep it hidden
   * with the owner's reason as its public `hidden.reason` (or the flags' reason when `reason` is
   * ""). Enqueues `forum.content_reviewed`, and `forum.post_moderated {hidden: false}` for a restore.
   * The same decision again answers the recorded one with `changed` false, and changes and
   * enqueues nothing. Throws `not_found` for an absent target, `invalid_state` when it awaits no
   * review (decided otherwise, or never hidden by flags).
   */
  async decide(targetId: string, decision: ReviewDecisionKind, reason: string): Promise<forum.ReviewDecision> {
    const table = tableOf(targetId);
    const kind = table === "posts" ? "post" : "comment";
    return withTransaction(this.pool, async (tx) => {
      const now = this.clock.now();
      const t = (
        await tx.query<TargetRow>(
          `SELECT ${table === "posts" ? "id" : "post_id"} AS post_id, author_id, hidden_at IS NOT NULL AS hidden,
                  hidden_reason, hidden_by_flags, flags_decision, flags_decided_at, flags_decision_reason
             FROM ${table} WHERE id = $1 FOR UPDATE`,
          [targetId],
        )
      ).rows[0];
      if (!t) throw new ApsError("not_found", `${kind} ${targetId} not found`);
      const answer = (changed: boolean, at: Date, why: string, hidden: boolean): forum.ReviewDecision => ({
        targetId,
        postId: t.post_id,
        authorId: t.author_id,
        decision,
        reason: why,
        decidedAt: at.toISOString(),
        hidden,
        changed,
      });
      if (!t.hidden_by_flags) {
        if (t.flags_decision === decision && t.flags_decided_at)
          return answer(false, t.flags_decided_at, t.flags_decision_reason ?? "", t.hidden);
        throw new ApsError(
          "invalid_state",
          t.flags_decision && t.flags_decided_at
            ? `this ${kind} awaits no review: the owner decided ${t.flags_decision} at ${t.flags_decided_at.toISOString()}`
            : `this ${kind} awaits no review: flags did not hide it`,
        );
      }
      if (decision === "restore")
        await tx.query(`UPDATE ${table} SET hidden_at = NULL, hidden_reason = NULL WHERE id = $1`, [targetId]);
      else if (reason) await tx.query(`UPDATE ${table} SET hidden_reason = $2 WHERE id = $1`, [targetId, reason]);
      await decideFlags(tx, table, targetId, decision, reason, now);
      const commentId = table === "comments" ? targetId : "";
      await this.outbox.publish(tx, "forum.content_reviewed", {
        occurredAt: now.toISOString(),
        postId: t.post_id,
        commentId,
        authorId: t.author_id,
        decision,
        reason,
      });
      if (decision === "restore")
        await this.outbox.publish(tx, "forum.post_moderated", {
          occurredAt: now.toISOString(),
          postId: t.post_id,
          commentId,
          hidden: false,
          by: "owner",
          reason: "",
          previousReason: t.hidden_reason ?? "",
        });
      return answer(true, now, reason, decision !== "restore");
    });
  }
}
