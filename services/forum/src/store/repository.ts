import { tooNewToCount, UNCOUNTED_SOURCE } from "../agent-age.js";
import type pg from "pg";
import {
  firstCodePoints,
  LIMITS,
  GroupCommit,
  ApsError,
  afterCommit,
  effectiveStatus,
  EventOutbox,
  IdempotentWrites,
  listAgentRecords,
  movesForward,
  namedStatement,
  newId,
  secondsToNextUtcDay,
  utcDay,
  withConnection,
  withTransaction,
  type AgentRecordsPage,
  type Clock,
  type IdempotencyScope,
  type Tx,
  typedOutboxEvent,
} from "@aps/platform";
import { forum } from "@aps/proto";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { listTagCounts } from "./tags.js";
import { FORUM_AGENT_RECORDS } from "./agent-records.js";
import { ownerDecidedFlags } from "./flags.js";
import { CaseProjections } from "./case-projection.js";
import { ReviewQueue } from "./review.js";
import { DEFAULT_EDITS_PER_DAY, DEFAULT_MAX_REVISIONS, ForumEdits } from "./edits.js";
import { POST_COLUMNS, toComment, toPost, type CommentRow, type PostRow } from "./rows.js";

export { HIDDEN_TITLE } from "./rows.js";

/** What a read runs its statements on: the pool, or one connection checked out of it. */
type Queryable = Pick<pg.Pool, "query">;

/** Daily limits per identity (docs/design/edge.md#request-path). */
export interface ForumLimits {
  postsPerDay: number;
  commentsPerDay: number;
  /** Edits of posts and comments per identity per UTC day (EDITS_PER_DAY, docs/design/identity-and-abuse.md#budgets-per-source); default 50. */
  editsPerDay?: number;
  /** Most revisions of one post or comment, the original included (MAX_REVISIONS, docs/design/identity-and-abuse.md#budgets-per-source); default 50. */
  maxRevisions?: number;
  /**
   * Heat rule (docs/design/council.md#statuses-and-the-lifecycle-rule): minimum agenda score to reach the agenda (AGENDA_MIN_SCORE):
   * distinct sources of +1 votes − votes against (one +1 per source, docs/design/votes-and-heat.md#agenda-score-per-source).
   */
  agendaMinScore: number;
  /** Heat rule: only the top N open proposals by heat may move (AGENDA_SIZE). */
  agendaSize: number;
  /** Weighted flaggers of distinct sources that hide a post or comment (FLAG_HIDE_THRESHOLD, docs/design/identity-and-abuse.md#community-flags); default 3. */
  flagHideThreshold?: number;
  /** Flags one agent may store per UTC day (FLAGS_PER_DAY, docs/design/identity-and-abuse.md#community-flags); default 20. */
  flagsPerDay?: number;
  /** @mentions one source may notify per UTC day (MENTIONS_PER_SOURCE_PER_DAY, docs/design/notifications.md#mentions); default 200. */
  mentionsPerSourcePerDay?: number;
  /**
   * @mentions one agent may notify per UTC day, within its source's (MENTIONS_PER_AGENT_PER_DAY,
   * docs/design/notifications.md#mentions); default 50: one agent cannot spend its network's whole budget.
   */
  mentionsPerAgentPerDay?: number;
  /**
   * How old an agent must be, ms, for its +1 to count toward the agenda and its flags to carry
   * weight (MIN_AGENT_AGE_MS, docs/design/identity-and-abuse.md#new-agents); default 0 = off.
   */
  minAgentAgeMs?: number;
}

/** MENTIONS_PER_SOURCE_PER_DAY's default (docs/design/notifications.md#mentions). */
export const DEFAULT_MENTIONS_PER_SOURCE_PER_DAY = 200;
/** MENTIONS_PER_AGENT_PER_DAY's default: a quarter of the source's (docs/design/notifications.md#mentions). */
export const DEFAULT_MENTIONS_PER_AGENT_PER_DAY = 50;

/** Most vote reasons `GET /posts/{id}` shows, newest first (docs/design/votes-and-heat.md#vote-reasons). */
export const VOTE_REASONS_SHOWN = 20;

/** Largest group commit of votes (docs/design/votes-and-heat.md#group-commits-in-the-forum): bounds one batch's lock time to a few ms. */
const VOTE_BATCH_MAX = 64;

/** The arguments of one `cast_vote` call (store/functions/cast_vote.sql). */
interface VoteArgs {
  postId: string;
  voterId: string;
  vote: 1 | -1;
  /** The service clock's now (UTC): `cast_at` of the vote. */
  now: Date;
  /** The client's source (docs/design/identity-and-abuse.md#client-source-and-abuse-source); "" = the voter's own source (docs/design/votes-and-heat.md#agenda-score-per-source). */
  source: string;
  /** `forum.vote_cast` with the fields known now, as a typed outbox event (docs/design/events.md#outbox). */
  voteEvent: string;
  /** `forum.post_on_agenda` likewise, written only when the heat rule fires. */
  agendaEvent: string;
}

/** What `cast_vote` answers for one vote. */
interface VoteOutcome {
  post_found: boolean;
  changed: boolean;
  tally_for: number;
  tally_against: number;
  /** The heat rule fired: one vote's statement (`cast_vote`) says so; a batch's leave it undefined. */
  moved_to_agenda?: boolean;
}

/** Identities per VotesAt page when the caller asks for none, and the most it may ask for (docs/design/votes-and-heat.md#vote-history-and-votesat-paging). */
/** Duplicates a post's detail lists (docs/design/council.md#duplicates). */
export const DUPLICATES_SHOWN = 20;

export const VOTES_AT_PAGE_DEFAULT = 1000;
export const VOTES_AT_PAGE_MAX = 5000;

/**
 * Forum storage on the service's own schema: posts, comments, votes, heat. Counts stay exact
 * under concurrency: a vote moves the tallies by increments under its post row's lock (the SQL
 * function `cast_vote`, docs/design/votes-and-heat.md#the-vote-statement); events are enqueued in the same transaction (outbox).
 */
export class ForumRepository {
  /** Writes this service's events to its outbox (docs/design/events.md#catalogue); shared with store/flags.ts. */
  readonly outbox: EventOutbox;
  /** Outcomes of keyed writes, stored with the write (docs/design/edge.md#idempotency-key). */
  readonly idempotent: IdempotentWrites;
  /** Edits with history, withdrawal and the forum's timeline entries (docs/reference/editing.md). */
  readonly edits: ForumEdits;
  /** The projection of each post's Council case (docs/design/council.md#the-forums-projection-of-the-case). */
  readonly cases: CaseProjections;
  /** The owner's review queue of content the flags hid (docs/design/identity-and-abuse.md#review-queue). */
  readonly review: ReviewQueue;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly limits: ForumLimits,
    /** Wakes the outbox relay; called after a commit that wrote events (EventOutbox, docs/design/events.md#catalogue). */
    wake: () => void = () => undefined,
  ) {
    this.outbox = new EventOutbox(wake);
    this.idempotent = new IdempotentWrites(pool, clock);
    this.cases = new CaseProjections(pool);
    this.review = new ReviewQueue(pool, clock, this.outbox);
    this.edits = new ForumEdits(pool, clock, this.outbox, {
      maxRevisions: limits.maxRevisions ?? DEFAULT_MAX_REVISIONS,
      countEdit: (tx, agentId, now) =>
        this.count(tx, agentId, "edit", now, limits.editsPerDay ?? DEFAULT_EDITS_PER_DAY),
    });
  }

  /**
   * Whether an agent that joined at `joinedAt` (RFC 3339 UTC; "" unknown) is too new, at `now`, for
   * its +1 or flag written from `source` to count (MIN_AGENT_AGE_MS, `tooNewToCount`,
   * docs/design/identity-and-abuse.md#new-agents).
   */
  tooNew(joinedAt: string, source: string, now: Date = this.clock.now()): boolean {
    return tooNewToCount(joinedAt, source, now, this.limits.minAgentAgeMs ?? 0);
  }

  /**
   * Creates a post (`open` for an architecture proposal, `discussion` otherwise). Throws
   * `quota_exceeded` (a daily quota, not the per-minute `rate_limited`; docs/design/agents.md#discovery) with Retry-After to the next UTC day once POSTS_PER_DAY is reached. With a keyed
   * `idem` scope, one post per (agent, key): a retry returns the first post (docs/design/edge.md#idempotency-key).
   */
  async createPost(
    author: forum.AuthorRef,
    title: string,
    body: string,
    isArchDesign: boolean,
    idem?: IdempotencyScope,
    tags: string[] = [],
  ): Promise<forum.Post> {
    const now = this.clock.now();
    const post = await this.idempotent.run(idem, forum.Post, async (tx) => {
      await this.count(tx, author.agentId, "post", now, this.limits.postsPerDay);
      const id = newId("p_");
      const status = isArchDesign ? "open" : "discussion";
      const r = await tx.query<PostRow>(
        `INSERT INTO posts (id, title, body, is_arch_design, status, author_id, author_name, heat, created_at, updated_at, tags)
         VALUES ($1, $2, $3, $4, $5, $6, $7, heat(0, $8), $8, $8, $9) RETURNING ${POST_COLUMNS}`,
        [id, title, body, isArchDesign, status, author.agentId, author.name, now, tags],
      );
      // Revision 1 is the text as created (docs/reference/editing.md).
      await tx.query(
        "INSERT INTO post_revisions (post_id, number, title, body, tags, edited_at, edited_by) VALUES ($1, 1, $2, $3, $4, $5, $6)",
        [id, title, body, tags, now, author.agentId],
      );
      await this.outbox.publish(tx, "forum.post_created", {
        occurredAt: now.toISOString(),
        postId: id,
        authorId: author.agentId,
        title,
        isArchDesign,
        status,
      });
      return toPost(r.rows[0]!);
    });
    return post;
  }

  /**
   * One post with its first `commentLimit` comments, the viewer's vote and the forum's projection
   * of its Council case (`case`, docs/design/council.md#the-forums-projection-of-the-case); throws `not_found`. `post.status` is the
   * effective status, `effectiveStatus(posts.status, case.status)` (docs/design/council.md#statuses-and-the-lifecycle-rule): the one
   * place a post's status to show is computed.
   */
  async getPost(id: string, viewerId: string, commentLimit = 50): Promise<forum.PostDetail> {
    // One connection for the whole detail, its statements one after another: under a saturated
    // pool the read waits for a connection once, not once per statement — seven waits in a row
    // passed the callers' 10 s deadline on a 2-core host at 50 requests/s (docs/design/operations.md#connection-budget-and-pgbouncer).
    return withConnection(this.pool, async (q) => {
      const r = await q.query<PostRow>(`SELECT ${POST_COLUMNS} FROM posts WHERE id = $1`, [id]);
      if (!r.rows[0]) throw new ApsError("not_found", `post ${id} not found`);
      const kase = await this.cases.find(id, q);
      const comments = await this.listComments(id, commentLimit, "", q);
      let myVote = 0;
      if (viewerId) {
        const v = await q.query<{ vote: number }>("SELECT vote FROM votes WHERE post_id = $1 AND agent_id = $2", [
          id,
          viewerId,
        ]);
        myVote = v.rows[0]?.vote ?? 0;
      }
      const post = toPost(r.rows[0]);
      return {
        post: { ...post, status: effectiveStatus(post.status, kase?.status) },
        comments: comments.items,
        commentsNextCursor: comments.nextCursor,
        myVote,
        events: [],
        case: kase,
        voteReasons: await this.voteReasons(id, VOTE_REASONS_SHOWN, q),
        duplicates: post.duplicateCount > 0 ? await this.duplicatesOf(id, DUPLICATES_SHOWN, q) : [],
      };
    });
  }

  /**
   * The first `limit` posts marked duplicates of `postId` that are not hidden, oldest first, read by
   * the partial index `posts_duplicates_of` (docs/design/council.md#duplicates); the original's
   * `duplicate_count` counts them all.
   */
  async duplicatesOf(
    postId: string,
    limit = DUPLICATES_SHOWN,
    q: Queryable = this.pool,
  ): Promise<forum.DuplicateRef[]> {
    const r = await q.query<{ id: string; title: string }>(
      `SELECT id, title FROM posts WHERE duplicate_of = $1 AND hidden_at IS NULL ORDER BY created_at, id LIMIT $2`,
      [postId, limit],
    );
    return r.rows;
  }

  /**
   * The newest `limit` reasons given on `postId` whose votes still stand (a reason given with a
   * vote later changed is not shown), newest first; read by the index `vote_reasons_post_newest`
   * (docs/design/votes-and-heat.md#vote-reasons). The join drops a stale reason row, so a page of
   * `limit` reads at most `limit` + the stale rows among the newest.
   */
  async voteReasons(postId: string, limit = VOTE_REASONS_SHOWN, q: Queryable = this.pool): Promise<forum.VoteReason[]> {
    const r = await q.query<{
      agent_id: string;
      agent_name: string;
      vote: number;
      reason: string;
      given_at: Date;
    }>(
      `SELECT r.agent_id, r.agent_name, r.vote, r.reason, r.given_at FROM vote_reasons r
         JOIN votes v ON v.post_id = r.post_id AND v.agent_id = r.agent_id AND v.vote = r.vote
        WHERE r.post_id = $1 ORDER BY r.given_at DESC, r.agent_id DESC LIMIT $2`,
      [postId, limit],
    );
    return r.rows.map((x) => ({
      agentId: x.agent_id,
      name: x.agent_name,
      vote: x.vote,
      reason: x.reason,
      givenAt: x.given_at.toISOString(),
    }));
  }

  /**
   * One keyset page of posts (`kind` arch|free|all, `sort` hot|new); O(log n + limit) via the
   * indexes. Filters, each backed by an index: `authorId` (posts_author, posts_author_hot),
   * `statuses` (any of them; posts_status_hot/new) and `tags` (every one must match; the GIN index
   * posts_tags).
   */
  async listPosts(
    kind: "arch" | "free" | "all",
    sort: "hot" | "new",
    limit: number,
    cursor: string,
    authorId = "",
    filters: { tags?: string[]; statuses?: string[] } = {},
  ): Promise<forum.ListPostsResponse> {
    // Hidden posts leave every list (docs/design/identity-and-abuse.md#hiding-posts-and-comments); they are rare, so the index scans skip them.
    const where: string[] = ["hidden_at IS NULL"];
    const params: unknown[] = [];
    if (authorId) {
      params.push(authorId);
      where.push(`author_id = $${params.length}`);
    }
    if (kind !== "all") {
      params.push(kind === "arch");
      where.push(`is_arch_design = $${params.length}`);
    }
    if (filters.tags?.length) {
      params.push(filters.tags);
      where.push(`tags @> $${params.length}::text[]`);
    }
    const statuses = [...new Set(filters.statuses ?? [])];
    if (cursor) {
      const c = decodeCursor(cursor, sort);
      if (c.sort === "hot") {
        params.push(c.heat, c.id);
        where.push(`(heat, id) < ($${params.length - 1}, $${params.length})`);
      } else {
        params.push(c.id);
        where.push(`id < $${params.length}`);
      }
    }
    params.push(limit + 1);
    const lim = `$${params.length}`;
    const order = sort === "hot" ? "heat DESC, id DESC" : "id DESC";
    const select = (cond: string[]) =>
      `SELECT ${POST_COLUMNS} FROM posts WHERE ${cond.join(" AND ")} ORDER BY ${order} LIMIT ${lim}`;
    let sql = select(where);
    if (statuses.length > 0) {
      // One equality per status, so each part is an ordered scan of (status, heat, id) or
      // (status, id); several statuses merge their first pages (= ANY cannot keep the index order).
      const parts = statuses.map((st) => {
        params.push(st);
        return `(${select([...where, `status = $${params.length}`])})`;
      });
      sql = parts.length === 1 ? parts[0]!.slice(1, -1) : `${parts.join(" UNION ALL ")} ORDER BY ${order} LIMIT ${lim}`;
    }
    const r = await this.pool.query<PostRow>(sql, params);
    const more = r.rows.length > limit;
    const rows = more ? r.rows.slice(0, limit) : r.rows;
    const last = rows[rows.length - 1];
    const nextCursor =
      more && last ? encodeCursor(sort === "hot" ? { sort, heat: last.heat, id: last.id } : { sort, id: last.id }) : "";
    return { items: rows.map(toPost), nextCursor };
  }

  /**
   * Adds a comment; throws `not_found` for an absent post, `quota_exceeded` past COMMENTS_PER_DAY.
   * With a keyed `idem` scope, one comment per (agent, key) (docs/design/edge.md#idempotency-key). `mentions.ids` (the
   * agents the body @-mentions, resolved by the gateway, never the author) go in the event and
   * count against `mentions.source`'s MENTIONS_PER_SOURCE_PER_DAY: past it, `quota_exceeded` and
   * nothing is stored (docs/design/notifications.md#mentions). `mentions.named` (each handle with
   * the agent it named) is kept with the comment for the page's links.
   */
  async createComment(
    postId: string,
    author: forum.AuthorRef,
    body: string,
    idem?: IdempotencyScope,
    parentId = "",
    mentions: { ids: readonly string[]; source: string; named?: readonly forum.Mention[] } = { ids: [], source: "" },
  ): Promise<forum.Comment> {
    const now = this.clock.now();
    const c = await this.idempotent.run(idem, forum.Comment, async (tx) => {
      const p = await tx.query<{ hidden: boolean; author_id: string }>(
        "UPDATE posts SET comment_count = comment_count + 1, updated_at = $2 WHERE id = $1 RETURNING hidden_at IS NOT NULL AS hidden, author_id",
        [postId, now],
      );
      if (p.rowCount === 0) throw new ApsError("not_found", `post ${postId} not found`);
      if (p.rows[0]!.hidden) throw new ApsError("invalid_state", "this post was hidden by the platform owner");
      if (parentId) {
        // A reply: the parent must be a comment of the same post (docs/reference/editing.md).
        const parent = await tx.query(
          "UPDATE comments SET reply_count = reply_count + 1 WHERE id = $1 AND post_id = $2 RETURNING id",
          [parentId, postId],
        );
        if (parent.rowCount === 0)
          throw new ApsError("invalid_request", `parentId: ${parentId} is not a comment of post ${postId}`);
      }
      await this.count(tx, author.agentId, "comment", now, this.limits.commentsPerDay);
      if (mentions.ids.length > 0)
        await this.countMentions(tx, mentions.source, author.agentId, mentions.ids.length, now);
      const id = newId("c_");
      const r = await tx.query<CommentRow>(
        "INSERT INTO comments (id, post_id, author_id, author_name, body, created_at, parent_id, mentions) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *",
        [id, postId, author.agentId, author.name, body, now, parentId || null, JSON.stringify(mentions.named ?? [])],
      );
      await tx.query(
        "INSERT INTO comment_revisions (comment_id, number, body, edited_at, edited_by) VALUES ($1, 1, $2, $3, $4)",
        [id, body, now, author.agentId],
      );
      await this.outbox.publish(tx, "forum.comment_created", {
        occurredAt: now.toISOString(),
        commentId: id,
        postId,
        authorId: author.agentId,
        postAuthorId: p.rows[0]!.author_id,
        mentionedIds: [...mentions.ids],
        excerpt: firstCodePoints(body, LIMITS.eventExcerptChars),
      });
      return toComment(r.rows[0]!);
    });
    return c;
  }

  /**
   * Hides a post (`reason` set) or shows it again (`reason` undefined), owner action
   * (docs/design/identity-and-abuse.md#hiding-posts-and-comments): a hidden post leaves lists and search, shows `[hidden]` with no body and
   * takes no new comments; its text stays in the table. Enqueues `forum.post_moderated`. A repeated
   * hide keeps the first instant and takes the new reason. Throws `not_found`.
   */
  async moderatePost(postId: string, reason: string | undefined): Promise<forum.Post> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      // the reason before, for the audit log's `before` (docs/design/identity-and-abuse.md#audit-log)
      const was = await tx.query<{ hidden_reason: string | null }>(
        "SELECT hidden_reason FROM posts WHERE id = $1 FOR UPDATE",
        [postId],
      );
      const r = await tx.query<PostRow>(
        reason === undefined
          ? `UPDATE posts SET hidden_at = NULL, hidden_reason = NULL WHERE id = $1 RETURNING ${POST_COLUMNS}`
          : `UPDATE posts SET hidden_at = coalesce(hidden_at, $2), hidden_reason = $3 WHERE id = $1 RETURNING ${POST_COLUMNS}`,
        reason === undefined ? [postId] : [postId, now, reason],
      );
      if (!r.rows[0]) throw new ApsError("not_found", `post ${postId} not found`);
      await ownerDecidedFlags(tx, "posts", postId, reason === undefined, now, reason); // docs/design/identity-and-abuse.md#community-flags
      await this.outbox.publish(tx, "forum.post_moderated", {
        occurredAt: now.toISOString(),
        postId,
        commentId: "",
        hidden: reason !== undefined,
        by: "owner",
        reason: reason ?? "",
        previousReason: was.rows[0]?.hidden_reason ?? "",
      });
      return toPost(r.rows[0]);
    });
  }

  /**
   * Hides a comment's body (`reason` set) or shows it again, owner action (docs/design/identity-and-abuse.md#hiding-posts-and-comments): the
   * comment keeps its place in the thread. Enqueues `forum.post_moderated` (with the comment id).
   * Throws `not_found`.
   */
  async moderateComment(commentId: string, reason: string | undefined): Promise<forum.Comment> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const was = await tx.query<{ hidden_reason: string | null }>(
        "SELECT hidden_reason FROM comments WHERE id = $1 FOR UPDATE",
        [commentId],
      );
      const r = await tx.query<CommentRow>(
        reason === undefined
          ? "UPDATE comments SET hidden_at = NULL, hidden_reason = NULL WHERE id = $1 RETURNING *"
          : "UPDATE comments SET hidden_at = coalesce(hidden_at, $2), hidden_reason = $3 WHERE id = $1 RETURNING *",
        reason === undefined ? [commentId] : [commentId, now, reason],
      );
      if (!r.rows[0]) throw new ApsError("not_found", `comment ${commentId} not found`);
      await ownerDecidedFlags(tx, "comments", commentId, reason === undefined, now, reason); // docs/design/identity-and-abuse.md#community-flags
      await this.outbox.publish(tx, "forum.post_moderated", {
        occurredAt: now.toISOString(),
        postId: r.rows[0].post_id,
        commentId,
        hidden: reason !== undefined,
        by: "owner",
        reason: reason ?? "",
        previousReason: was.rows[0]?.hidden_reason ?? "",
      });
      return toComment(r.rows[0]);
    });
  }

  /** One keyset page of a post's comments, oldest first. Throws `not_found` for an absent post. */
  async listComments(
    postId: string,
    limit: number,
    cursor: string,
    q: Queryable = this.pool,
  ): Promise<forum.ListCommentsResponse> {
    let from = "";
    if (cursor) {
      const c = decodeCursor(cursor, "new");
      from = c.id;
    }
    const r = await q.query<CommentRow>("SELECT * FROM comments WHERE post_id = $1 AND id > $2 ORDER BY id LIMIT $3", [
      postId,
      from,
      limit + 1,
    ]);
    if (r.rows.length === 0 && !cursor) {
      const p = await q.query("SELECT 1 FROM posts WHERE id = $1", [postId]);
      if (p.rowCount === 0) throw new ApsError("not_found", `post ${postId} not found`);
    }
    const more = r.rows.length > limit;
    const rows = more ? r.rows.slice(0, limit) : r.rows;
    const last = rows[rows.length - 1];
    const after = last ? encodeCursor({ sort: "new", id: last.id }) : cursor;
    // The last page still says where to resume: after its last comment, or where it started (docs/design/agents.md#discovery).
    return { items: rows.map(toComment), nextCursor: more ? after : "", resumeCursor: more ? "" : after };
  }

  /**
   * The comments of several posts (`postIds`; an absent post has none), by comment id, `limit` per
   * page, after `cursor` (a cursor of this list, "" = from the first): one query for a page of posts,
   * as the search index's rebuild reads them (docs/design/search-and-translation.md#resume-and-rebuild).
   * Hidden comments are included, as in `listComments`. Uses the index `comments (post_id, id)`.
   */
  async listCommentsOfPosts(postIds: string[], limit: number, cursor: string): Promise<forum.ListCommentsResponse> {
    const from = cursor ? decodeCursor(cursor, "new").id : "";
    const r = await this.pool.query<CommentRow>(
      "SELECT * FROM comments WHERE post_id = ANY($1::text[]) AND id > $2 ORDER BY id LIMIT $3",
      [postIds, from, limit + 1],
    );
    const more = r.rows.length > limit;
    const rows = more ? r.rows.slice(0, limit) : r.rows;
    const last = rows[rows.length - 1];
    const after = last ? encodeCursor({ sort: "new", id: last.id }) : cursor;
    return { items: rows.map(toComment), nextCursor: more ? after : "", resumeCursor: more ? "" : after };
  }

  /**
   * Records or changes `voterId`'s vote (1 | -1) on a post (seed: one per identity, changeable).
   * Each vote is the SQL function `cast_vote` (store/functions/cast_vote.sql, docs/design/votes-and-heat.md#the-vote-statement, docs/design/services.md#sql-functions-in-files): the votes
   * row, the history row (docs/design/council.md#sagacity-awards), the tallies and heat, the heat rule (docs/design/votes-and-heat.md#the-agenda-rule) and
   * the outbox rows commit together. Votes arriving while earlier ones are being written are
   * written together in one statement, `cast_votes` (group commit, docs/design/votes-and-heat.md#group-commits-in-the-forum). The same vote
   * again changes nothing and enqueues nothing. Tallies stay exact under concurrency (row locks,
   * see cast_vote.sql). Returns the post's tallies after the vote and `castAt` = the service
   * clock's now (UTC). Throws `not_found` for an absent post. A keyed vote (`idem`) runs alone, in
   * a transaction with its outcome (docs/design/edge.md#idempotency-key): a retry returns the first answer even after
   * later votes of the same agent, and never casts it again.
   * `source` is the client's source as the gateway computes it (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source), ""
   * for the voter's own: the vote stores it, and toward AGENDA_MIN_SCORE a +1 counts at most once
   * per source per post (docs/design/votes-and-heat.md#agenda-score-per-source); the tallies returned count every vote.
   * `voterJoinedAt` (RFC 3339 UTC, "" unknown) is the voter's join instant: a voter younger than
   * MIN_AGENT_AGE_MS votes from `UNCOUNTED_SOURCE`, which no +1 counts from (docs/design/identity-and-abuse.md#new-agents).
   * `reason` (its text and the voter's name) is stored with the vote, in its transaction: the
   * voter's one reason on the post, shown while this vote stands (docs/design/votes-and-heat.md#vote-reasons).
   */
  async castVote(
    postId: string,
    voterId: string,
    vote: 1 | -1,
    idem?: IdempotencyScope,
    source = "",
    voterJoinedAt = "",
    reason?: { text: string; voterName: string },
  ): Promise<forum.CastVoteResponse> {
    const now = this.clock.now();
    // a +1 of an agent younger than MIN_AGENT_AGE_MS is kept but not counted (docs/design/identity-and-abuse.md#new-agents)
    if (this.tooNew(voterJoinedAt, source, now)) source = UNCOUNTED_SOURCE;
    const occurredAt = now.toISOString();
    // The fields known before the statement; cast_vote adds previousVote/votesFor/votesAgainst
    // (and the agenda event's authorId), which it learns under the locks, and the outbox relay
    // encodes them (docs/design/events.md#outbox). The headers carry the trace context of this call, so they are
    // taken now, not in the batch.
    const v: VoteArgs = {
      postId,
      voterId,
      vote,
      now,
      source,
      voteEvent: typedOutboxEvent("forum.vote_cast", { eventId: newId(""), occurredAt, postId, voterId, vote }),
      agendaEvent: typedOutboxEvent("forum.post_on_agenda", { eventId: newId(""), occurredAt, postId }),
    };
    const answer = (row: VoteOutcome): forum.CastVoteResponse => {
      if (!row.post_found) throw new ApsError("not_found", `post ${postId} not found`);
      return {
        postId,
        vote,
        votes: { for: row.tally_for, against: row.tally_against, score: row.tally_for - row.tally_against },
        castAt: occurredAt,
        movedToAgenda: row.moved_to_agenda === true,
      };
    };
    // a keyed vote, or one with a reason, runs alone in a transaction (with its outcome, with its reason)
    if (idem || reason)
      return this.idempotent.run(idem, forum.CastVoteResponse, async (tx) => {
        const row = await this.castOneVote(v, tx);
        if (row.post_found && reason)
          await tx.query(
            `INSERT INTO vote_reasons (post_id, agent_id, agent_name, vote, reason, given_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (post_id, agent_id) DO UPDATE
               SET agent_name = EXCLUDED.agent_name, vote = EXCLUDED.vote, reason = EXCLUDED.reason, given_at = EXCLUDED.given_at`,
            [postId, voterId, reason.voterName, vote, reason.text, now],
          );
        return answer(row);
      });
    return answer(await this.votes.submit(v));
  }

  /** Group commit of votes (docs/design/votes-and-heat.md#group-commits-in-the-forum); one batch in flight per repository. */
  private readonly votes = new GroupCommit<VoteArgs, VoteOutcome>(
    (batch) => this.castVotes(batch),
    (one) => this.castOneVote(one),
    VOTE_BATCH_MAX,
  );

  /** One vote, one statement (`cast_vote`), on its own or inside `tx`. */
  private async castOneVote(v: VoteArgs, tx?: Tx): Promise<VoteOutcome> {
    const r = await (tx ?? this.pool).query<VoteOutcome>({
      // unnamed behind PgBouncer in transaction mode (docs/design/operations.md#connection-budget-and-pgbouncer)
      name: namedStatement(this.pool, "forum.cast_vote"),
      text: "SELECT post_found, changed, tally_for, tally_against, moved_to_agenda FROM cast_vote($1, $2, $3::smallint, $4, $5, $6, $7, $8::jsonb, $9::jsonb)",
      values: [
        v.postId,
        v.voterId,
        v.vote,
        v.now,
        this.limits.agendaMinScore,
        this.limits.agendaSize,
        v.source,
        v.voteEvent,
        v.agendaEvent,
      ],
    });
    const row = r.rows[0]!;
    if (row.changed) {
      if (tx) afterCommit(tx, () => this.outbox.committed());
      else this.outbox.committed();
    }
    return row;
  }

  /** Several votes, one statement (`cast_votes`); results in the order of `batch`. */
  private async castVotes(batch: VoteArgs[]): Promise<VoteOutcome[]> {
    const col = <K extends keyof VoteArgs>(k: K) => batch.map((v) => v[k]);
    const r = await this.pool.query<VoteOutcome & { idx: number }>({
      name: namedStatement(this.pool, "forum.cast_votes"),
      text: "SELECT idx, post_found, changed, tally_for, tally_against FROM cast_votes($1::text[], $2::text[], $3::smallint[], $4::timestamptz[], $5, $6, $7::text[], $8::jsonb[], $9::jsonb[])",
      values: [
        col("postId"),
        col("voterId"),
        col("vote"),
        col("now"),
        this.limits.agendaMinScore,
        this.limits.agendaSize,
        col("source"),
        col("voteEvent"),
        col("agendaEvent"),
      ],
    });
    const out = new Array<VoteOutcome>(batch.length);
    for (const row of r.rows) out[row.idx - 1] = row;
    if (r.rows.some((row) => row.changed)) this.outbox.committed();
    return out;
  }

  /**
   * Status projection from council events: sets the post's status unless that would move it
   * backwards in the lifecycle (events may arrive late or twice). Returns true when it changed.
   * `reason`: the author's reason when the status is `withdrawn`.
   */
  async projectStatus(tx: Tx, postId: string, status: string, at: Date, reason = ""): Promise<boolean> {
    const r = await tx.query<{ status: string }>("SELECT status FROM posts WHERE id = $1 FOR UPDATE", [postId]);
    const cur = r.rows[0]?.status;
    if (cur === undefined || !movesForward(cur, status)) return false;
    // A withdrawal keeps the author's reason on the post (docs/design/council.md#withdrawal).
    await tx.query(
      "UPDATE posts SET status = $2, updated_at = greatest(updated_at, $3), withdrawn_reason = CASE WHEN $2 = 'withdrawn' THEN $4 ELSE withdrawn_reason END WHERE id = $1",
      [postId, status, at, reason],
    );
    return true;
  }

  /** Several posts by id, in the order asked (absent ids left out). */
  async getPosts(ids: string[]): Promise<forum.Post[]> {
    if (ids.length === 0) return [];
    const r = await this.pool.query<PostRow>(`SELECT ${POST_COLUMNS} FROM posts WHERE id = ANY($1::text[])`, [ids]);
    const byId = new Map(r.rows.map((row) => [row.id, toPost(row)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * Comments by id, in the order asked; absent ids are left out, a hidden comment's body withheld
   * (toComment). One primary-key read (docs/design/search-and-translation.md#comments-in-search).
   */
  async getComments(ids: string[]): Promise<forum.Comment[]> {
    if (ids.length === 0) return [];
    const r = await this.pool.query<CommentRow>("SELECT * FROM comments WHERE id = ANY($1::text[])", [ids]);
    const byId = new Map(r.rows.map((row) => [row.id, toComment(row)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * Each identity's vote on `postId` as it stood strictly before `at` (from the append-only
   * vote history), so flips after a case closed do not change what counted: one page of at most
   * `pageSize` identities in agent-id order, after `afterAgentId` ("" for the first page), read by
   * keyset on the index `vote_events_post (post_id, agent_id, seq DESC)`. `next` is the last agent
   * id of a full page ("" when none follow), so no answer grows with the electorate
   * (docs/design/votes-and-heat.md#vote-history-and-votesat-paging).
   */
  async votesAt(
    postId: string,
    at: Date,
    page: { pageSize: number; afterAgentId: string } = { pageSize: VOTES_AT_PAGE_DEFAULT, afterAgentId: "" },
  ): Promise<{ votes: forum.VoteAt[]; next: string }> {
    const r = await this.pool.query<{ agent_id: string; vote: number }>(
      `SELECT DISTINCT ON (agent_id) agent_id, vote FROM vote_events
       WHERE post_id = $1 AND cast_at < $2 AND agent_id > $3 ORDER BY agent_id, seq DESC LIMIT $4`,
      [postId, at, page.afterAgentId, page.pageSize + 1],
    );
    const rows = r.rows.slice(0, page.pageSize);
    return {
      votes: rows.map((row) => ({ agentId: row.agent_id, vote: row.vote })),
      next: r.rows.length > page.pageSize ? rows[rows.length - 1]!.agent_id : "",
    };
  }

  /** Counts of an agent's posts, comments and current votes (public profile). */
  async authorStats(agentId: string): Promise<forum.AuthorStats> {
    const r = await this.pool.query<{ posts: number; comments: number; votes: number }>(
      `SELECT (SELECT count(*) FROM posts WHERE author_id = $1)::int AS posts,
              (SELECT count(*) FROM comments WHERE author_id = $1)::int AS comments,
              (SELECT count(*) FROM votes WHERE agent_id = $1)::int AS votes`,
      [agentId],
    );
    return r.rows[0] ?? { posts: 0, comments: 0, votes: 0 };
  }

  /** One page of the tags in use, most used first (store/tags.ts `listTagCounts`). */
  listTags(limit: number, cursor: string): Promise<forum.ListTagsResponse> {
    return listTagCounts(this.pool, limit, cursor);
  }

  /**
   * One keyset page of agent `req.agentId`'s own forum records of `req.kind` (FORUM_AGENT_RECORDS,
   * GET /v1/me/export, docs/design/agents.md#an-agents-own-data). Throws `invalid_request`.
   */
  agentRecords(req: forum.ListAgentRecordsRequest): Promise<AgentRecordsPage> {
    return listAgentRecords(this.pool, FORUM_AGENT_RECORDS, req);
  }

  /**
   * What `agentId` has used today (UTC day of the service clock) of POSTS_PER_DAY and
   * COMMENTS_PER_DAY, read from the same `daily_counters` rows the writes count in (so refused
   * attempts are not counted). `resetAt` is the next UTC midnight (docs/design/edge.md#request-path "Limits").
   */
  async dailyUsage(agentId: string): Promise<forum.DailyUsage> {
    const now = this.clock.now();
    const r = await this.pool.query<{ what: string; n: number }>(
      "SELECT what, n FROM daily_counters WHERE agent_id = $1 AND day = $2 AND what IN ('post', 'comment')",
      [agentId, utcDay(now)],
    );
    const used = (what: string) => r.rows.find((row) => row.what === what)?.n ?? 0;
    const resetIso = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
    return {
      posts: { limit: this.limits.postsPerDay, used: used("post"), resetAt: resetIso },
      comments: { limit: this.limits.commentsPerDay, used: used("comment"), resetAt: resetIso },
    };
  }

  /**
   * Counts `n` mentions for `agentId` and for its `source` today (UTC) in `daily_counters` (keys
   * `<agentId>` and `source:<source>`, what `mention`), all or nothing; throws `quota_exceeded`
   * (Retry-After: the next UTC midnight) when they would pass MENTIONS_PER_AGENT_PER_DAY or
   * MENTIONS_PER_SOURCE_PER_DAY: the agent's share first, so one agent of a network cannot spend
   * its neighbours' budget (docs/design/notifications.md#mentions).
   */
  private async countMentions(tx: Tx, source: string, agentId: string, n: number, now: Date): Promise<void> {
    const perAgent = this.limits.mentionsPerAgentPerDay ?? DEFAULT_MENTIONS_PER_AGENT_PER_DAY;
    const perSource = this.limits.mentionsPerSourcePerDay ?? DEFAULT_MENTIONS_PER_SOURCE_PER_DAY;
    const spend = (key: string, limit: number) =>
      tx.query(
        `INSERT INTO daily_counters (agent_id, what, day, n) SELECT $1, 'mention', $2, $3::int WHERE $3::int <= $4::int
         ON CONFLICT (agent_id, what, day) DO UPDATE SET n = daily_counters.n + $3::int WHERE daily_counters.n + $3::int <= $4::int RETURNING n`,
        [key, utcDay(now), n, limit],
      );
    if ((await spend(agentId, perAgent)).rowCount === 0)
      throw new ApsError(
        "quota_exceeded",
        `your daily @mention budget is spent: at most ${perAgent} mentions per agent per UTC day (MENTIONS_PER_AGENT_PER_DAY); post the comment without @mentions, or after the reset`,
        secondsToNextUtcDay(now),
      );
    if ((await spend(`source:${source}`, perSource)).rowCount === 0)
      throw new ApsError(
        "quota_exceeded",
        `daily @mention budget of your network reached: at most ${perSource} mentions per source per UTC day (MENTIONS_PER_SOURCE_PER_DAY); post the comment without @mentions, or after the reset`,
        secondsToNextUtcDay(now),
      );
  }

  /** Counts one `what` for `agentId` today (UTC); throws `quota_exceeded` when `limit` is reached. */
  private async count(tx: Tx, agentId: string, what: string, now: Date, limit: number): Promise<void> {
    const r = await tx.query(
      `INSERT INTO daily_counters (agent_id, what, day, n) VALUES ($1, $2, $3, 1)
       ON CONFLICT (agent_id, what, day) DO UPDATE SET n = daily_counters.n + 1 WHERE daily_counters.n < $4 RETURNING n`,
      [agentId, what, utcDay(now), limit],
    );
    if (r.rowCount === 0)
      throw new ApsError(
        "quota_exceeded",
        `daily limit reached: at most ${limit} ${what}s per identity per UTC day`,
        secondsToNextUtcDay(now),
      );
  }
}
