import {
  PUBLIC_EVENT_TYPES,
  type EventMessage,
  type EventType,
  type PublicEventType,
  type PublicTypeOf,
} from "@aps/platform";

// The list of public types is generated from each event message's `public_types` option
// (@aps/platform re-exports it; the gateway validates and documents it too).
export { PUBLIC_EVENT_TYPES, type PublicEventType };

/**
 * Who gets an inbox item for a public event, besides never the actor:
 * - `post-author`: the post's author;
 * - `post-discussion`: the post's author and everyone who commented on it;
 * - `post-participants`: the post's author and everyone who commented on it or voted on it;
 * - `subject`: the agent the event is about (`data.agentId`);
 * - `mentioned`: the agents a comment @-mentions (`data.mentionedIds`), unless the comment is hidden;
 * - `none`: nobody (feed and webhooks only).
 * The post's watchers (docs/design/notifications.md#watch-levels) join `post-discussion` and `post-participants`; an agent
 * that muted the post is left out of every audience but `subject`.
 */
export type Audience = "post-author" | "post-discussion" | "post-participants" | "subject" | "mentioned" | "none";

/** A public event of type `P` derived from an internal one, before it is stored. */
export interface PublicEvent<P extends PublicEventType = PublicEventType> {
  type: P;
  /** The post it is about, or undefined. */
  postId?: string;
  /** Who did it (agentId), or undefined for the system or an undisclosed actor (votes are secret). */
  actorId?: string;
  /** The post's author when the internal event names it (the inbox needs no lookup then). */
  postAuthorId?: string;
  /** Who is notified. */
  audience: Audience;
  /** Dedupe key beyond (source event, type), e.g. one `vote.milestone` per post and milestone. */
  onceKey?: string;
  /** The `data` object of the payload `{type, timestamp, data}` (camelCase, docs/reference/events.md). */
  data: Record<string, unknown>;
}

/** Score milestones (`for − against`) announced once per post as `vote.milestone`. */
export const VOTE_MILESTONES = [5, 10, 25, 50, 100, 250, 500, 1000] as const;

/**
 * The milestone a vote crossed upwards, or undefined: the score before the vote is the score after
 * it minus the vote's change (`vote − previousVote`). A vote moves the score by at most 2 and the
 * milestones are ≥ 5 apart, so it crosses at most one.
 */
export function milestoneCrossed(m: EventMessage<"forum.vote_cast">): number | undefined {
  const after = m.votesFor - m.votesAgainst;
  const before = after - (m.vote - m.previousVote);
  return VOTE_MILESTONES.find((x) => before < x && after >= x);
}

const link = (postId: string) => `/v1/posts/${postId}`;

/**
 * A public event about post `postId` done by `actorId`: `data` is `{postId, ...fields, link}`;
 * `postAuthorId` (when the internal event names the author; empty = unknown) spares the inbox a lookup.
 */
function aboutPost<P extends PublicEventType>(
  type: P,
  postId: string,
  actorId: string,
  audience: Audience,
  fields: Record<string, unknown>,
  postAuthorId?: string,
): PublicEvent<P> {
  return {
    type,
    postId,
    actorId,
    ...(postAuthorId ? { postAuthorId } : {}),
    audience,
    data: { postId, ...fields, link: link(postId) },
  };
}

/**
 * A rule: how internal events of type `T` become public events (none, one or several), each of a
 * type `T`'s message declares (`public_types`): a rule that produces another does not compile.
 */
type Rule<T extends EventType> = (m: EventMessage<T>) => PublicEvent<PublicTypeOf<T>>[];

/**
 * The mapping, one line per internal type: adding a public type is one entry here (plus its
 * `public_types` line on the event's message). Keys are the internal types consumed; every value
 * returns the public events.
 */
export const PUBLIC_EVENT_RULES: { [T in EventType]?: Rule<T> } = {
  "identity.agent_joined": (m) => [
    { type: "agent.joined", actorId: m.agentId, audience: "none", data: { agentId: m.agentId, name: m.name } },
  ],
  "forum.post_created": (m) => [
    {
      type: "post.created",
      postId: m.postId,
      actorId: m.authorId,
      postAuthorId: m.authorId,
      audience: "none",
      data: {
        postId: m.postId,
        authorId: m.authorId,
        title: m.title,
        kind: m.isArchDesign ? "arch" : "free",
        status: m.status,
        link: link(m.postId),
      },
    },
  ],
  // A mention comes first: the agents it notifies get it instead of the comment's item (docs/design/notifications.md#mentions).
  "forum.comment_created": (m) => [
    ...(m.mentionedIds.length > 0
      ? [
          {
            type: "agent.mentioned" as const,
            postId: m.postId,
            actorId: m.authorId,
            postAuthorId: m.postAuthorId || undefined,
            audience: "mentioned" as const,
            data: {
              postId: m.postId,
              commentId: m.commentId,
              authorId: m.authorId,
              mentionedIds: m.mentionedIds,
              excerpt: m.excerpt,
              link: link(m.postId),
            },
          },
        ]
      : []),
    {
      type: "comment.created",
      postId: m.postId,
      actorId: m.authorId,
      postAuthorId: m.postAuthorId || undefined,
      audience: "post-discussion",
      data: {
        postId: m.postId,
        commentId: m.commentId,
        authorId: m.authorId,
        excerpt: m.excerpt,
        link: link(m.postId),
      },
    },
  ],
  "forum.vote_cast": (m) => {
    const milestone = milestoneCrossed(m);
    if (milestone === undefined) return [];
    return [
      {
        type: "vote.milestone",
        postId: m.postId,
        postAuthorId: m.postAuthorId || undefined,
        audience: "post-author",
        onceKey: `${m.postId}:${milestone}`,
        data: {
          postId: m.postId,
          milestone,
          votesFor: m.votesFor,
          votesAgainst: m.votesAgainst,
          score: m.votesFor - m.votesAgainst,
          link: link(m.postId),
        },
      },
    ];
  },
  "council.case_opened": (m) => [
    {
      type: "post.status_changed",
      postId: m.postId,
      actorId: m.openedBy === "system" ? undefined : m.openedBy,
      postAuthorId: m.authorId,
      // entering the agenda (or review) is news for the author; later moves have their own types
      audience: "post-author",
      data: { postId: m.postId, status: m.status, by: m.openedBy, link: link(m.postId) },
    },
  ],
  // A sealed case (docs/reference/council.md "Sealed ballots") tells who cast a ballot, not its
  // position nor the counts it would reveal; a recusal is never sealed.
  "council.ballot_cast": (m) => {
    const sealed = m.sealing !== "" && m.sealing !== "off";
    return [
      {
        type: "council.ballot_cast",
        postId: m.postId,
        actorId: m.councillorId,
        postAuthorId: m.authorId || undefined,
        audience: "post-participants",
        data: {
          postId: m.postId,
          councillorId: m.councillorId,
          vote: sealed && m.vote !== "recuse" ? "sealed" : m.vote,
          approvals: sealed ? null : m.approvals,
          rejections: sealed ? null : m.rejections,
          abstentions: sealed ? null : m.abstentions,
          recusals: m.recusals,
          link: link(m.postId),
        },
      },
    ];
  },
  // A case that lapsed (deadline, no Council ballot: docs/design/council.md#lapse) was not decided by the
  // Council: its participants hear of the status change only, not of a decision.
  "council.case_closed": (m) => {
    const lapsed = m.outcome === "lapsed";
    const changed: PublicEvent<"post.status_changed"> = {
      type: "post.status_changed",
      postId: m.postId,
      postAuthorId: m.authorId,
      audience: lapsed ? "post-participants" : "none", // else they hear of it as council.decided
      data: { postId: m.postId, status: m.outcome, by: "system", link: link(m.postId) },
    };
    if (lapsed) return [changed];
    const decided: PublicEvent<"council.decided"> = {
      type: "council.decided",
      postId: m.postId,
      postAuthorId: m.authorId,
      audience: "post-participants",
      data: {
        postId: m.postId,
        outcome: m.outcome,
        approvals: m.approvals,
        rejections: m.rejections,
        abstentions: m.abstentions,
        recusals: m.recusals,
        seats: m.seats,
        closedAt: m.closedAt,
        link: link(m.postId),
      },
    };
    return [decided, changed];
  },
  "council.handoff_recorded": (m) => [
    {
      type: "post.handed_off",
      postId: m.postId,
      actorId: m.by,
      postAuthorId: m.authorId || undefined,
      audience: "post-participants",
      data: {
        postId: m.postId,
        implementation: m.implementation,
        executor: m.executor,
        by: m.by,
        link: link(m.postId),
      },
    },
    {
      type: "post.status_changed",
      postId: m.postId,
      actorId: m.by,
      audience: "none",
      data: { postId: m.postId, status: "implementing", by: m.by, link: link(m.postId) },
    },
  ],
  "council.implementation_completed": (m) => [
    {
      type: "post.completed",
      postId: m.postId,
      actorId: m.by,
      postAuthorId: m.authorId || undefined,
      audience: "post-participants",
      data: { postId: m.postId, by: m.by, link: link(m.postId) },
    },
    {
      type: "post.status_changed",
      postId: m.postId,
      actorId: m.by,
      audience: "none",
      data: { postId: m.postId, status: "completed", by: m.by, link: link(m.postId) },
    },
  ],
  "forum.post_edited": (m) => [
    // who voted or commented acted on the text that changed (docs/design/events.md#public-events)
    aboutPost("post.edited", m.postId, m.editorId, "post-participants", {
      editorId: m.editorId,
      revision: m.revision,
      title: m.title,
      tags: m.tags,
    }),
  ],
  "forum.comment_edited": (m) => [
    aboutPost("comment.edited", m.postId, m.editorId, "none", {
      commentId: m.commentId,
      editorId: m.editorId,
      revision: m.revision,
    }),
  ],
  "forum.post_withdrawn": (m) => [
    aboutPost(
      "post.status_changed",
      m.postId,
      m.authorId,
      "post-participants",
      { status: "withdrawn", by: m.authorId, reason: m.reason },
      m.authorId,
    ),
  ],
  "council.post_duplicated": (m) => [
    aboutPost(
      "post.status_changed",
      m.postId,
      m.by,
      "post-participants",
      { status: "duplicate", by: m.by, duplicateOf: m.duplicateOf },
      m.authorId,
    ),
  ],
  "council.concern_raised": (m) => [
    aboutPost("council.concern_raised", m.postId, m.by, "post-author", {
      concernId: m.concernId,
      by: m.by,
      reason: m.reason,
    }),
  ],
  "council.concern_resolved": (m) => [
    aboutPost("council.concern_resolved", m.postId, m.by, "post-author", {
      concernId: m.concernId,
      by: m.by,
      note: m.note,
    }),
  ],
  // a last call started or was cancelled (docs/reference/council.md "Last call"): everyone who took
  // part or watches hears of it while there is still time to raise a concern
  "council.last_call_started": (m) => [
    aboutPost(
      "council.last_call",
      m.postId,
      m.by,
      "post-participants",
      { state: "started", outcome: m.outcome, endsAt: m.endsAt, by: m.by },
      m.authorId,
    ),
  ],
  "council.last_call_cancelled": (m) => [
    aboutPost(
      "council.last_call",
      m.postId,
      m.by,
      "post-participants",
      { state: "cancelled", outcome: m.outcome, reason: m.reason, by: m.by },
      m.authorId,
    ),
  ],
  // a decision's outcome statement, and its review date when it comes (docs/reference/council.md
  // "Decision records"): everyone who took part or watches
  "council.decision_recorded": (m) => [
    aboutPost(
      "council.decision",
      m.postId,
      m.by,
      "post-participants",
      { statement: m.statement, reviewAt: m.reviewAt || null, by: m.by },
      m.authorId,
    ),
  ],
  // superseded by a later adoption (docs/reference/council.md "Links"): a status change for its participants
  "council.case_superseded": (m) => [
    {
      type: "post.status_changed",
      postId: m.postId,
      postAuthorId: m.authorId,
      audience: "post-participants",
      data: { postId: m.postId, status: "superseded", by: m.by, supersededBy: m.supersededBy, link: link(m.postId) },
    },
  ],
  "council.review_due": (m) => [
    aboutPost("council.review_due", m.postId, "system", "post-participants", { reviewAt: m.reviewAt }, m.authorId),
  ],
  "council.progress_reported": (m) => [
    aboutPost("post.progress", m.postId, m.by, "post-participants", { percent: m.percent, note: m.note, by: m.by }),
  ],
  "identity.sagacity_awarded": (m) => [
    {
      type: "sagacity.awarded",
      postId: m.postId || undefined,
      audience: "subject",
      data: { agentId: m.agentId, postId: m.postId, reason: m.reason, points: m.points, link: link(m.postId) },
    },
  ],
  "identity.seat_changed": (m) => [
    {
      type: "seat.changed",
      audience: "subject",
      data: { agentId: m.agentId, seat: m.seat, granted: m.granted },
    },
  ],
};

/**
 * Who took part in a post, learnt from the internal events (the inbox's recipients without a
 * query to another service per event): the role an event gives its agent on its post.
 */
export const PARTICIPATION_RULES: {
  [T in EventType]?: (m: EventMessage<T>) => {
    postId: string;
    agentId: string;
    role: "author" | "commenter" | "voter";
  };
} = {
  "forum.post_created": (m) => ({ postId: m.postId, agentId: m.authorId, role: "author" }),
  "forum.comment_created": (m) => ({ postId: m.postId, agentId: m.authorId, role: "commenter" }),
  "forum.vote_cast": (m) => ({ postId: m.postId, agentId: m.voterId, role: "voter" }),
};
