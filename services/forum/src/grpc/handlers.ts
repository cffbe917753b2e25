import { z } from "zod";
import {
  ApsError,
  asApsError,
  CAST_VOTES_MAX,
  firstCodePoints,
  logHandlerFault,
  withTraceHeaders,
  idempotencyScope,
  isReservedTag,
  isStorable,
  parseRequest,
  LIMITS,
  POST_STATUSES,
  reservedTagMessage,
  text,
  unary,
  type Logger,
} from "@aps/platform";
import type { forum } from "@aps/proto";
import { VOTES_AT_PAGE_DEFAULT, VOTES_AT_PAGE_MAX, type ForumRepository } from "../store/repository.js";
import { FLAG_REASONS, REVIEW_DECISIONS, type FlagStore } from "../store/flags.js";

const id = z.string().min(1).max(64);
/** An Idempotency-Key as the gateway accepts it (1–255 visible ASCII), or "" for none (docs/design/edge.md#idempotency-key). */
const idempotencyKey = z.string().regex(/^[\x21-\x7e]{0,255}$/);
const author = z.object({ agentId: id, name: z.string().min(1).max(LIMITS.nameChars) });
/**
 * A post's tags (docs/reference/editing.md): 0–5 of `[a-z0-9-]{1,30}`, none a reserved word (a
 * status or kind name, or `docs`: docs/design/edge.md#validation), stored unique and sorted.
 */
const tags = z
  .array(
    z
      .string()
      .regex(/^[a-z0-9-]{1,30}$/, "a tag is 1–30 of a-z, 0-9 and -")
      .refine((t) => !isReservedTag(t), { error: (i) => reservedTagMessage(String(i.input)) }),
  )
  .transform((t) => [...new Set(t)].sort())
  .pipe(z.array(z.string()).max(5, "at most 5 tags"));
const createPost = z.object({
  author,
  title: text(1, LIMITS.titleChars),
  body: text(1, LIMITS.postBodyChars),
  isArchDesign: z.boolean(),
  tags,
});
const editPost = z
  .object({
    postId: id,
    editorId: id,
    title: text(1, LIMITS.titleChars).optional(),
    body: text(1, LIMITS.postBodyChars).optional(),
    setTags: z.boolean(),
    tags,
    expectedRevision: z.number().int().min(1).optional(),
  })
  .refine((e) => e.title !== undefined || e.body !== undefined || e.setTags, {
    message: "give at least one of title, body, tags",
  });
const editComment = z.object({
  commentId: id,
  editorId: id,
  body: text(1, LIMITS.commentChars),
  expectedRevision: z.number().int().min(1).optional(),
});
const listRevisions = z.object({
  id,
  limit: z.number().int().min(1).max(LIMITS.listMax),
  after: z.number().int().min(0),
});
const withdraw = z.object({ postId: id, agentId: id, reason: text(1, LIMITS.reasonChars) });
const listPosts = z.object({
  kind: z.enum(["arch", "free", "all"]),
  sort: z.enum(["hot", "new"]),
  limit: z.number().int().min(1).max(LIMITS.listMax),
  cursor: z.string().max(512),
  /** "" = every author; an agent id = that agent's posts (posts_author, posts_author_hot indexes). */
  authorId: z.union([z.literal(""), id]),
  tags: z.array(z.string().regex(/^[a-z0-9-]{1,30}$/)).max(5),
  statuses: z.array(z.enum(POST_STATUSES)).max(POST_STATUSES.length),
});
const createComment = z.object({
  postId: id,
  author,
  body: text(1, LIMITS.commentChars),
  parentId: z.union([z.literal(""), z.string().regex(/^c_[0-9A-HJKMNP-TV-Z]{26}$/, "parentId: c_ + ULID")]),
});
/** One post's comments (`postId`), or those of a page of posts (`postIds`, 1–100 ids): exactly one of the two. */
const listComments = z
  .object({
    postId: z.union([z.literal(""), id]),
    postIds: z.array(id).max(LIMITS.listMax),
    limit: z.number().int().min(1).max(LIMITS.listMax),
    cursor: z.string().max(512),
  })
  .refine((r) => (r.postId === "") !== (r.postIds.length === 0), {
    message: "give postId or postIds (1–100 ids), not both",
    path: ["postIds"],
  });
/** Owner moderation (docs/design/identity-and-abuse.md#hiding-posts-and-comments): hiding needs a reason, showing again takes none. */
const moderate = z
  .object({ id, hidden: z.boolean(), reason: z.string().max(LIMITS.reasonChars) })
  .refine((m) => !m.hidden || (m.reason.trim().length > 0 && isStorable(m.reason)), {
    message: "hiding needs a reason (1–10 000 characters)",
    path: ["reason"],
  });
/** A page of the owner's review queue (docs/design/identity-and-abuse.md#review-queue). */
const listReviewQueue = z.object({ limit: z.number().int().min(1).max(LIMITS.listMax), cursor: z.string().max(512) });
/**
 * The owner's decision on a target of the review queue: `reason` 1–10 000 characters, "" allowed
 * only for `restore` (docs/design/identity-and-abuse.md#review-queue).
 */
const recordReview = z
  .object({
    targetId: z.string().regex(/^[pc]_[0-9A-HJKMNP-TV-Z]{26}$/, "targetId: p_ or c_ + ULID"),
    decision: z.enum(REVIEW_DECISIONS),
    reason: z.string().max(LIMITS.reasonChars).refine(isStorable, "reason: not storable text"),
  })
  .refine((r) => r.decision === "restore" || r.reason.trim().length > 0, {
    message: "keep_hidden and suspend_author need a reason (1–10 000 characters)",
    path: ["reason"],
  });
/** A vote; `reason` 0–LIMITS.voteReasonChars code points, "" for none (docs/design/votes-and-heat.md#vote-reasons). */
const castVote = z.object({
  postId: id,
  voterId: id,
  vote: z.union([z.literal(1), z.literal(-1)]),
  reason: text(0, LIMITS.voteReasonChars).refine((t) => t === "" || t.trim() !== "", "a reason is not only whitespace"),
  voterName: z.string().max(LIMITS.nameChars),
});
/**
 * The client's source as the gateway sends it (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source: at most 64
 * characters), "" for the caller's own (docs/design/votes-and-heat.md#agenda-score-per-source, docs/design/identity-and-abuse.md#community-flags).
 */
const source = z.string().max(128);
/** An agent's join instant as the gateway sends it (RFC 3339 UTC), "" when unknown (docs/design/identity-and-abuse.md#new-agents). */
const joinedAtField = z.union([z.literal(""), z.iso.datetime({ offset: true })]);
/** The agents a comment @-mentions, resolved by the gateway (docs/design/notifications.md#mentions): at most LIMITS.mentionsPerComment. */
const mentionIds = z
  .array(z.string().regex(/^ext_[0-9A-HJKMNP-TV-Z]{26}$/, "mentionIds: ext_ + ULID"))
  .max(LIMITS.mentionsPerComment)
  .transform((m) => [...new Set(m)]);
/** Each handle with the agent it named, kept with the comment (docs/design/notifications.md#mentions). */
const namedMentions = z
  .array(
    z.object({
      handle: z.string().regex(/^[\p{L}\p{N}_.-]{1,64}$/u, "mentions: a handle of 1–64 letters, digits, _ . -"),
      agentId: z.string().regex(/^ext_[0-9A-HJKMNP-TV-Z]{26}$/, "mentions: agentId ext_ + ULID"),
    }),
  )
  .max(LIMITS.mentionsPerComment);

/**
 * A listed post: its body cut to the first LIMITS.excerptChars code points (`bodyLength` keeps
 * the full length), so a page of 100 stays far below the gRPC message limit (docs/design/edge.md#lists-and-cursors).
 */
function excerpt(p: forum.Post): forum.Post {
  return { ...p, body: firstCodePoints(p.body, LIMITS.excerptChars) };
}

/** gRPC handlers of aps.forum.v1.ForumService; every request is re-validated here. */
export function forumHandlers(repo: ForumRepository, log: Logger, flags?: FlagStore): forum.ForumServiceServer {
  /** One vote of CastVote or CastVotes, validated here; rejects with ApsError (or a fault). */
  const castOneVote = async (req: forum.CastVoteRequest): Promise<forum.CastVoteResponse> => {
    const r = parseRequest(castVote, req);
    const key = parseRequest(idempotencyKey, req.idempotencyKey);
    // the source is not part of the keyed request: a retry from another network is the same vote
    const from = parseRequest(source, req.source);
    const joinedAt = parseRequest(joinedAtField, req.voterJoinedAt);
    return repo.castVote(
      r.postId,
      r.voterId,
      r.vote,
      // the reason is part of the keyed request (the name is not: it is who, not what)
      idempotencyScope(r.voterId, key, "forum.CastVote", {
        postId: r.postId,
        voterId: r.voterId,
        vote: r.vote,
        ...(r.reason ? { reason: r.reason } : {}),
      }),
      from,
      joinedAt,
      r.reason ? { text: r.reason, voterName: r.voterName } : undefined,
    );
  };
  return {
    createPost: unary(log, async (req: forum.CreatePostRequest) => {
      const r = parseRequest(createPost, req);
      const idem = idempotencyScope(
        r.author.agentId,
        parseRequest(idempotencyKey, req.idempotencyKey),
        "forum.CreatePost",
        r,
      );
      return repo.createPost(r.author, r.title, r.body, r.isArchDesign, idem, r.tags);
    }),
    // With `withEvents`, the timeline's forum events too: the post detail in one call (docs/design/council.md#the-forums-projection-of-the-case).
    getPost: unary(log, async (req: forum.GetPostRequest) => {
      const postId = parseRequest(id, req.id);
      if (!req.withEvents) return repo.getPost(postId, req.viewerId);
      const [detail, events] = await Promise.all([repo.getPost(postId, req.viewerId), repo.edits.postEvents(postId)]);
      return { ...detail, events };
    }),
    // The forum's projection of the post's case has caught up with a council write (docs/design/council.md#the-forums-projection-of-the-case).
    getCaseRevision: unary(log, async (req: forum.GetCaseRevisionRequest) => ({
      revision: await repo.cases.revision(parseRequest(id, req.postId)),
    })),
    listPosts: unary(log, async (req: forum.ListPostsRequest) => {
      const r = parseRequest(listPosts, req);
      const page = await repo.listPosts(r.kind, r.sort, r.limit, r.cursor, r.authorId, {
        tags: r.tags,
        statuses: r.statuses,
      });
      return req.fullBodies ? page : { ...page, items: page.items.map(excerpt) };
    }),
    createComment: unary(log, async (req: forum.CreateCommentRequest) => {
      const r = parseRequest(createComment, req);
      const key = parseRequest(idempotencyKey, req.idempotencyKey);
      // Mentions and source are not part of the keyed request (a retry resolves the same body again).
      const mentions = parseRequest(mentionIds, req.mentionIds);
      const from = parseRequest(source, req.source);
      const named = parseRequest(namedMentions, req.mentions).filter((m) => m.agentId !== r.author.agentId);
      return repo.createComment(
        r.postId,
        r.author,
        r.body,
        idempotencyScope(r.author.agentId, key, "forum.CreateComment", r),
        r.parentId,
        {
          ids: mentions.filter((m) => m !== r.author.agentId),
          source: from || `agent:${r.author.agentId}`,
          named,
        },
      );
    }),
    moderatePost: unary(log, async (req: forum.ModeratePostRequest) => {
      const r = parseRequest(moderate, { id: req.postId, hidden: req.hidden, reason: req.reason });
      return repo.moderatePost(r.id, r.hidden ? r.reason : undefined);
    }),
    moderateComment: unary(log, async (req: forum.ModerateCommentRequest) => {
      const r = parseRequest(moderate, { id: req.commentId, hidden: req.hidden, reason: req.reason });
      return repo.moderateComment(r.id, r.hidden ? r.reason : undefined);
    }),
    listComments: unary(log, async (req: forum.ListCommentsRequest) => {
      const r = parseRequest(listComments, req);
      if (r.postIds.length > 0) return repo.listCommentsOfPosts(r.postIds, r.limit, r.cursor);
      return repo.listComments(r.postId, r.limit, r.cursor);
    }),
    castVote: unary(log, (req: forum.CastVoteRequest) => castOneVote(req)),
    // each vote exactly as CastVote, in its own request's trace, failing alone (docs/design/votes-and-heat.md#gateway-batching)
    castVotes: unary(log, async (req: forum.CastVotesRequest, call): Promise<forum.CastVotesResponse> => {
      if (req.votes.length > CAST_VOTES_MAX)
        throw new ApsError(
          "invalid_request",
          `at most ${CAST_VOTES_MAX} votes in one CastVotes call, got ${req.votes.length}`,
        );
      const outcomes = await Promise.all(
        req.votes.map((v) =>
          withTraceHeaders(v.traceHeaders, () => castOneVote(v)).then(
            (vote): forum.CastVoteOutcome => ({ vote, errorCode: "", errorMessage: "", retryAfterSeconds: 0 }),
            (err: unknown): forum.CastVoteOutcome => {
              logHandlerFault(log, err, call.getPath());
              const e = asApsError(err);
              return {
                vote: undefined,
                errorCode: e.code,
                errorMessage: e.message,
                retryAfterSeconds: e.retryAfterSeconds ?? 0,
              };
            },
          ),
        ),
      );
      return { outcomes };
    }),
    getPosts: unary(log, async (req: forum.GetPostsRequest) => {
      const items = await repo.getPosts(parseRequest(z.array(id).max(LIMITS.listMax), req.ids));
      return { items: req.excerpts ? items.map(excerpt) : items };
    }),
    getComments: unary(log, async (req: forum.GetCommentsRequest) => ({
      items: await repo.getComments(parseRequest(z.array(id).max(LIMITS.listMax), req.ids)),
    })),
    votesAt: unary(log, async (req: forum.VotesAtRequest) => {
      const at = parseRequest(z.iso.datetime({ offset: true }), req.at);
      const pageSize = parseRequest(z.number().int().min(0).max(VOTES_AT_PAGE_MAX), req.pageSize);
      const afterAgentId = req.pageToken === "" ? "" : parseRequest(id, req.pageToken);
      const page = await repo.votesAt(parseRequest(id, req.postId), new Date(at), {
        pageSize: pageSize || VOTES_AT_PAGE_DEFAULT,
        afterAgentId,
      });
      return { votes: page.votes, nextPageToken: page.next };
    }),
    getAuthorStats: unary(log, async (req: forum.GetAuthorStatsRequest) =>
      repo.authorStats(parseRequest(id, req.agentId)),
    ),
    listTags: unary(log, async (req: forum.ListTagsRequest) => {
      const r = parseRequest(
        z.object({ limit: z.number().int().min(1).max(LIMITS.listMax), cursor: z.string().max(512) }),
        req,
      );
      return repo.listTags(r.limit, r.cursor);
    }),
    getDailyUsage: unary(log, async (req: forum.GetDailyUsageRequest) =>
      repo.dailyUsage(parseRequest(id, req.agentId)),
    ),
    listAgentRecords: unary(log, async (req: forum.ListAgentRecordsRequest) => repo.agentRecords(req)),
    flag: unary(log, async (req: forum.FlagRequest) => {
      const r = parseRequest(flagRequest, req);
      if (!flags) throw new ApsError("upstream_unavailable", "flags are not configured in this forum");
      // a flagger younger than MIN_AGENT_AGE_MS weighs as one below Sagacity 1 (docs/design/identity-and-abuse.md#new-agents)
      const weight = repo.tooNew(r.flaggerJoinedAt, r.source) ? 0 : r.flaggerSagacity;
      return flags.flag(r.targetId, r.flaggerId, weight, r.reason, r.text, r.source);
    }),
    listReviewQueue: unary(log, async (req: forum.ListReviewQueueRequest) => {
      const r = parseRequest(listReviewQueue, req);
      return repo.review.list(r.limit, r.cursor);
    }),
    recordReview: unary(log, async (req: forum.RecordReviewRequest) => {
      const r = parseRequest(recordReview, req);
      return repo.review.decide(r.targetId, r.decision, r.reason);
    }),
    editPost: unary(log, async (req: forum.EditPostRequest) => {
      const r = parseRequest(editPost, req);
      return repo.edits.editPost(r.postId, r.editorId, {
        title: r.title,
        body: r.body,
        tags: r.setTags ? r.tags : undefined,
        expectedRevision: r.expectedRevision,
      });
    }),
    listPostRevisions: unary(log, async (req: forum.ListPostRevisionsRequest) => {
      const r = parseRequest(listRevisions, req);
      return repo.edits.postRevisions(r.id, r.limit, r.after);
    }),
    editComment: unary(log, async (req: forum.EditCommentRequest) => {
      const r = parseRequest(editComment, req);
      return repo.edits.editComment(r.commentId, r.editorId, r.body, r.expectedRevision);
    }),
    listCommentRevisions: unary(log, async (req: forum.ListCommentRevisionsRequest) => {
      const r = parseRequest(listRevisions, req);
      return repo.edits.commentRevisions(r.id, r.limit, r.after);
    }),
    withdrawPost: unary(log, async (req: forum.WithdrawPostRequest) => {
      const r = parseRequest(withdraw, req);
      return repo.edits.withdrawPost(r.postId, r.agentId, r.reason);
    }),
    listPostEvents: unary(log, async (req: forum.ListPostEventsRequest) => ({
      items: await repo.edits.postEvents(parseRequest(id, req.postId)),
    })),
  };
}

/** A flag (docs/design/identity-and-abuse.md#community-flags): text is required for "other". */
const flagRequest = z
  .object({
    targetId: z.string().regex(/^(p|c)_[0-9A-HJKMNP-TV-Z]{26}$/),
    flaggerId: id,
    flaggerSagacity: z.number().int(),
    flaggerJoinedAt: joinedAtField,
    reason: z.enum(FLAG_REASONS),
    text: text(0, LIMITS.reasonChars),
    source,
  })
  .refine((r) => r.reason !== "other" || r.text.trim() !== "", {
    message: 'text is required when the reason is "other"',
    path: ["text"],
  });
