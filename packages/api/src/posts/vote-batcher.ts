import {
  ApsError,
  apsErrorOf,
  CAST_VOTES_MAX,
  GroupCommit,
  isUnimplemented,
  traceHeaders,
  withTraceHeaders,
  type ForumClient,
} from "@aps/platform";
import type { forum } from "@aps/proto";

/**
 * How long a batcher sends its votes one by one after a forum answered CastVotes UNIMPLEMENTED (a
 * replica of the release before, during a rolling update; docs/design/votes-and-heat.md#gateway-batching), ms.
 */
export const CAST_VOTES_UNSUPPORTED_RETRY_MS = 60_000;

/** One vote as the gateway casts it: absent fields at their proto3 defaults ("" for `voterJoinedAt`, `reason`, `voterName`). */
export type VoteRequest = Omit<forum.CastVoteRequest, "traceHeaders" | "voterJoinedAt" | "reason" | "voterName"> &
  Partial<Pick<forum.CastVoteRequest, "voterJoinedAt" | "reason" | "voterName">>;

/** One vote's outcome as the batcher hands it back: its answer, or the error its caller gets. */
type VoteOutcome = { vote: forum.CastVoteResponse } | { error: unknown };

/**
 * The gateway's side of the forum's group commit (docs/design/votes-and-heat.md#gateway-batching,
 * docs/design/votes-and-heat.md#group-commits-in-the-forum): the unkeyed votes that arrive while
 * this batcher's previous call is out go as ONE CastVotes call (at most CAST_VOTES_MAX), each
 * failing alone; the first vote after an idle moment goes at once as CastVote. A keyed vote, or
 * one with a reason, always goes alone (its key binds one call's outcome,
 * docs/design/edge.md#idempotency-key; the forum writes a reason in a transaction of its own).
 * One batcher per forum client (voteBatcherOf).
 */
export class VoteBatcher {
  /** @param forum the gateway's forum client (CastVote, CastVotes). */
  constructor(private readonly forum: Pick<ForumClient, "castVote" | "castVotes">) {}

  /**
   * Casts one vote (CastVote's contract): resolves with its answer (the vote and the counts after
   * it), rejects with the ApsError of that vote alone — or of the whole call when it failed as a
   * whole (transport, deadline: `upstream_unavailable`).
   */
  async cast(req: VoteRequest): Promise<forum.CastVoteResponse> {
    const vote: forum.CastVoteRequest = { voterJoinedAt: "", reason: "", voterName: "", ...req, traceHeaders: {} };
    if (vote.idempotencyKey !== "" || vote.reason !== "") return this.sendVote(vote);
    const outcome = await this.votes.submit({ ...vote, traceHeaders: traceHeaders() });
    if ("error" in outcome) throw outcome.error;
    return outcome.vote;
  }

  /** Votes waiting for the next CastVotes call; one call out at a time. */
  private readonly votes = new GroupCommit<forum.CastVoteRequest, VoteOutcome>(
    async (batch) => {
      if (Date.now() < this.castVotesUnsupportedUntil) return Promise.all(batch.map((one) => this.sendOne(one)));
      try {
        const { outcomes } = await this.forum.castVotes({ votes: batch });
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
    return withTraceHeaders(req.traceHeaders, () => this.forum.castVote({ ...req, traceHeaders: {} }));
  }
}

/** The batcher of each forum client: one per client, as the votes of one gateway share one call at a time. */
const batchers = new WeakMap<object, VoteBatcher>();

/** The VoteBatcher of `forum` (made on first use, kept while the client lives). */
export function voteBatcherOf(forum: Pick<ForumClient, "castVote" | "castVotes">): VoteBatcher {
  let batcher = batchers.get(forum);
  if (!batcher) batchers.set(forum, (batcher = new VoteBatcher(forum)));
  return batcher;
}
