import { status as GrpcStatus } from "@grpc/grpc-js";
import { callMethod } from "../grpc/client.js";
import { GroupCommit } from "../db/group-commit.js";
import { ApsError, apsErrorOf } from "../errors.js";
import { traceHeaders, withTraceHeaders } from "../bus/tracing.js";
import type { CallerIdentity } from "../grpc/caller-auth.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";
import { forum } from "@aps/proto";

/** `T` with the keys `K` optional (request fields added later, with defaults). */
type Optional<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/** Most votes in one CastVotes call (docs/design/votes-and-heat.md#gateway-batching); the forum refuses a larger batch as `invalid_request`. */
export const CAST_VOTES_MAX = 64;

/**
 * How long a client sends its votes one by one after a forum answered CastVotes UNIMPLEMENTED (a
 * replica of the release before, during a rolling update; docs/design/votes-and-heat.md#gateway-batching), ms.
 */
export const CAST_VOTES_UNSUPPORTED_RETRY_MS = 60_000;

/** True for an error of a call the server does not implement (gRPC UNIMPLEMENTED, carried as the ApsError's cause). */
function isUnimplemented(err: unknown): boolean {
  const cause = err instanceof ApsError ? err.cause : err;
  return (cause as { code?: unknown } | undefined)?.code === GrpcStatus.UNIMPLEMENTED;
}

/** One vote's outcome as the batcher hands it back: its answer, or the error its caller gets. */
type VoteOutcome = { vote: forum.CastVoteResponse } | { error: unknown };

/** Typed client of the forum service (gateway, council, identity); same error contract as IdentityClient (methods the .proto declares free of side effects are retried on transport failures, the rest never; docs/design/services.md#retries-declared-in-the-proto). */
export class ForumClient {
  private readonly c: Channel<typeof forum.ForumServiceDefinition>;
  private readonly conn: ServiceConnection<typeof forum.ForumServiceDefinition>;

  /** @param target `host:port` of the forum gRPC server (`FORUM_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport). `caller`: who this process is, sent with every gRPC call (docs/design/services.md#caller-policy-and-internal-trust). `deadlineMs`: its calls' deadline, ms (`GRPC_DEADLINE_MS`; default 10 000). */
  constructor(
    target: ServiceTarget<typeof forum.ForumServiceDefinition>,
    caller?: CallerIdentity,
    deadlineMs?: number,
  ) {
    this.conn = connect(target, forum.ForumServiceClient, caller, deadlineMs);
    this.c = this.conn.methods;
  }

  /** Creates a post; `tags` default to none. */
  createPost(req: Optional<forum.CreatePostRequest, "tags">): Promise<forum.Post> {
    return callMethod(this.c, forum.ForumServiceDefinition, "createPost", { tags: [], ...req });
  }
  /**
   * Post `id` with its first page of comments and `viewerId`'s vote ("" for anonymous); with
   * `withEvents`, its forum events too (`events`, as listPostEvents; docs/design/council.md#the-forums-projection-of-the-case).
   */
  getPost(id: string, viewerId: string, withEvents = false): Promise<forum.PostDetail> {
    return callMethod(this.c, forum.ForumServiceDefinition, "getPost", { id, viewerId, withEvents });
  }
  /** A page of posts; the `tags` and `statuses` filters default to none. */
  listPosts(req: Optional<forum.ListPostsRequest, "tags" | "statuses">): Promise<forum.ListPostsResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listPosts", { tags: [], statuses: [], ...req });
  }
  /** Adds a comment; `parentId` "" (the default) for a top-level one; no mentions and the author's own source by default (docs/design/notifications.md#mentions). */
  createComment(
    req: Optional<forum.CreateCommentRequest, "parentId" | "mentionIds" | "source" | "mentions">,
  ): Promise<forum.Comment> {
    return callMethod(this.c, forum.ForumServiceDefinition, "createComment", {
      parentId: "",
      mentionIds: [],
      source: "",
      mentions: [],
      ...req,
    });
  }
  listComments(req: forum.ListCommentsRequest): Promise<forum.ListCommentsResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listComments", req);
  }
  /**
   * Casts one vote (CastVote's contract). A vote without an idempotency key joins the votes that
   * arrive while this client's previous call is out: they go as ONE CastVotes call, each failing
   * alone (docs/design/votes-and-heat.md#gateway-batching, the gateway's side of the forum's group commit, docs/design/votes-and-heat.md#group-commits-in-the-forum); the first
   * vote after an idle moment goes at once as CastVote. A keyed vote always goes alone (its key
   * binds one call's outcome, docs/design/edge.md#idempotency-key). `voterJoinedAt` defaults to "" (unknown: the
   * new-agent rule does not apply, docs/design/identity-and-abuse.md#new-agents); `reason` and `voterName` to "" (none,
   * docs/design/votes-and-heat.md#vote-reasons). Rejects with ApsError like every method here.
   */
  async castVote(
    req: Optional<forum.CastVoteRequest, "traceHeaders" | "voterJoinedAt" | "reason" | "voterName">,
  ): Promise<forum.CastVoteResponse> {
    const vote = { voterJoinedAt: "", reason: "", voterName: "", ...req };
    // a keyed vote, or one with a reason, goes alone: the forum writes it in a transaction of its own
    if (vote.idempotencyKey !== "" || vote.reason !== "") return this.sendVote({ ...vote, traceHeaders: {} });
    const outcome = await this.votes.submit({ ...vote, traceHeaders: traceHeaders() });
    if ("error" in outcome) throw outcome.error;
    return outcome.vote;
  }
  /** Several votes in one call (at most CAST_VOTES_MAX), one outcome each in their order (docs/design/votes-and-heat.md#gateway-batching). */
  castVotes(req: forum.CastVotesRequest): Promise<forum.CastVotesResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "castVotes", req);
  }

  /** Votes waiting for this client's next CastVotes call (docs/design/votes-and-heat.md#gateway-batching); one call out at a time. */
  private readonly votes = new GroupCommit<forum.CastVoteRequest, VoteOutcome>(
    async (batch) => {
      if (Date.now() < this.castVotesUnsupportedUntil) return Promise.all(batch.map((one) => this.sendOne(one)));
      try {
        const { outcomes } = await this.castVotes({ votes: batch });
        return batch.map((_, i): VoteOutcome => {
          const o = outcomes[i];
          if (o?.vote && o.errorCode === "") return { vote: o.vote };
          if (o?.errorCode) return { error: apsErrorOf(o.errorCode, o.errorMessage, o.retryAfterSeconds) };
          return { error: new ApsError("internal", "the forum's CastVotes answer lacks this vote's outcome") };
        });
      } catch (error) {
        // a forum of the release before (rolling update): each vote alone, and so for a while
        if (isUnimplemented(error)) {
          this.castVotesUnsupportedUntil = Date.now() + CAST_VOTES_UNSUPPORTED_RETRY_MS;
          return Promise.all(batch.map((one) => this.sendOne(one)));
        }
        // the call as a whole failed (transport, deadline): every vote of it fails the same way
        return batch.map(() => ({ error }));
      }
    },
    (one) => this.sendOne(one),
    CAST_VOTES_MAX,
  );
  /** Until when (ms since the epoch) votes go one by one: a forum answered CastVotes UNIMPLEMENTED. */
  private castVotesUnsupportedUntil = 0;

  /** One vote as CastVote, its outcome as data. */
  private sendOne(one: forum.CastVoteRequest): Promise<VoteOutcome> {
    return this.sendVote(one).then(
      (vote) => ({ vote }),
      (error: unknown) => ({ error }),
    );
  }

  /** One vote as CastVote, in its own request's trace (the batcher may run it in another's). */
  private sendVote(req: forum.CastVoteRequest): Promise<forum.CastVoteResponse> {
    return withTraceHeaders(req.traceHeaders, () =>
      callMethod(this.c, forum.ForumServiceDefinition, "castVote", { ...req, traceHeaders: {} }),
    );
  }
  /** Hides a post (`hidden`, with a reason) or shows it again (owner action, docs/design/identity-and-abuse.md#hiding-posts-and-comments). */
  flag(req: Optional<forum.FlagRequest, "flaggerJoinedAt">): Promise<forum.FlagResult> {
    return callMethod(this.c, forum.ForumServiceDefinition, "flag", { flaggerJoinedAt: "", ...req });
  }
  moderatePost(req: forum.ModeratePostRequest): Promise<forum.Post> {
    return callMethod(this.c, forum.ForumServiceDefinition, "moderatePost", req);
  }
  /** Hides a comment's body (`hidden`, with a reason) or shows it again (docs/design/identity-and-abuse.md#hiding-posts-and-comments). */
  moderateComment(req: forum.ModerateCommentRequest): Promise<forum.Comment> {
    return callMethod(this.c, forum.ForumServiceDefinition, "moderateComment", req);
  }
  /**
   * One keyset page of the owner's review queue (docs/design/identity-and-abuse.md#review-queue):
   * content hidden by flags awaiting a decision, oldest first; `cursor` "" for the first page.
   */
  listReviewQueue(req: forum.ListReviewQueueRequest): Promise<forum.ListReviewQueueResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listReviewQueue", req);
  }
  /**
   * Records the owner's decision on a target of the review queue
   * (docs/design/identity-and-abuse.md#review-queue); the same decision again answers the recorded
   * one (`changed` false). Throws `not_found`, or `invalid_state` when the target awaits no review.
   */
  recordReview(req: forum.RecordReviewRequest): Promise<forum.ReviewDecision> {
    return callMethod(this.c, forum.ForumServiceDefinition, "recordReview", req);
  }
  /** The author's edit of a post: a new revision (docs/reference/editing.md). */
  editPost(req: forum.EditPostRequest): Promise<forum.Post> {
    return callMethod(this.c, forum.ForumServiceDefinition, "editPost", req);
  }
  /** A post's revisions, oldest first, after revision number `after`. */
  listPostRevisions(req: forum.ListPostRevisionsRequest): Promise<forum.PostRevisions> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listPostRevisions", req);
  }
  /** The author's edit of a comment: a new revision. */
  editComment(req: forum.EditCommentRequest): Promise<forum.Comment> {
    return callMethod(this.c, forum.ForumServiceDefinition, "editComment", req);
  }
  /** A comment's revisions, oldest first, after revision number `after`. */
  listCommentRevisions(req: forum.ListCommentRevisionsRequest): Promise<forum.CommentRevisions> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listCommentRevisions", req);
  }
  /** open → withdrawn for a proposal without a Council case (called by the council, docs/design/council.md#withdrawal). */
  withdrawPost(req: forum.WithdrawPostRequest): Promise<forum.Post> {
    return callMethod(this.c, forum.ForumServiceDefinition, "withdrawPost", req);
  }
  /** The forum's timeline entries of a post (edits, a withdrawal). */
  listPostEvents(postId: string): Promise<forum.ListPostEventsResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listPostEvents", { postId });
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/design/operations.md#health-and-readiness); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  /**
   * The revision of post `postId`'s Council case the forum's projection holds (0 when none): a
   * council write has reached the forum when it is at least the write's `Case.revision` (docs/design/council.md#the-forums-projection-of-the-case).
   */
  async getCaseRevision(postId: string): Promise<number> {
    return (await callMethod(this.c, forum.ForumServiceDefinition, "getCaseRevision", { postId })).revision;
  }
  /** Posts by id (≤ 100); `excerpts` cuts each body to LIMITS.excerptChars code points (docs/design/edge.md#lists-and-cursors). */
  getPosts(ids: string[], excerpts = false): Promise<forum.GetPostsResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "getPosts", { ids, excerpts });
  }
  /**
   * One page of every identity's vote on `postId` as it stood strictly before `at` (RFC 3339), in
   * agent-id order: pass the answer's `nextPageToken` back until it is "" (docs/design/votes-and-heat.md#vote-history-and-votesat-paging).
   * `pageSize` 1–5000, 0 for the forum's default (1000).
   */
  votesAt(postId: string, at: string, pageToken = "", pageSize = 0): Promise<forum.VotesAtResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "votesAt", { postId, at, pageToken, pageSize });
  }
  authorStats(agentId: string): Promise<forum.AuthorStats> {
    return callMethod(this.c, forum.ForumServiceDefinition, "getAuthorStats", { agentId });
  }
  /** Today's posts/comments against POSTS_PER_DAY / COMMENTS_PER_DAY for `agentId` (GET /v1/me/quotas). */
  /** One page of the tags in use, most used first (GET /v1/tags). */
  listTags(req: forum.ListTagsRequest): Promise<forum.ListTagsResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listTags", req);
  }
  dailyUsage(agentId: string): Promise<forum.DailyUsage> {
    return callMethod(this.c, forum.ForumServiceDefinition, "getDailyUsage", { agentId });
  }
  /** One keyset page of an agent's own posts, revisions, comments, votes or flags (GET /v1/me/export, docs/design/agents.md#an-agents-own-data). */
  listAgentRecords(req: forum.ListAgentRecordsRequest): Promise<forum.ListAgentRecordsResponse> {
    return callMethod(this.c, forum.ForumServiceDefinition, "listAgentRecords", req);
  }
  close(): void {
    this.conn.close();
  }
}
