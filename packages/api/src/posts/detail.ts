import type { z } from "zod";
import { issueCursor } from "../http/cursor.js";
import type * as rs from "../openapi/responses.js";
import { oneOf } from "../route.js";
import { renderedPost } from "../shared.js";
import { POST_STATUSES } from "@aps/platform";
import { lookUpAgents, namesOf, renderComment, verificationsOf, withVerifiedAuthor } from "../http/render.js";
import { OPEN_VIEW, renderBallot, renderTally, sealedView } from "../council/schemas.js";
import { caseRecords, caseTimeline } from "../http/render-case.js";
import type { RouteDeps } from "../route.js";
import { commentsList } from "./lists.js";
import { readPostWithCase } from "./post-with-case.js";
import { postTimeline } from "./timeline.js";

/**
 * The detail of post `id` (`GET /posts/{id}`, openapi/responses.ts `PostDetail`): the post with
 * its first comments, Council ballots, hand-off, case summary, timeline, depth and the newest vote reasons; with
 * `viewerId`, that viewer's `myVote` too. One forum read (the post with the forum's projection of
 * its case, docs/design/council.md#the-forums-projection-of-the-case) and one identity batch lookup (names and badges, docs/design/council.md#the-forums-projection-of-the-case).
 * Typed by the document's `PostDetail`: an enum field outside its values (a fault between the
 * services) throws (500) rather than answering a shape the document does not describe. Rejects as
 * the clients do (404 when the forum has no such post).
 */
export async function postDetail(
  { forum, identity }: Pick<RouteDeps, "forum" | "identity">,
  id: string,
  viewerId: string | undefined,
): Promise<z.input<typeof rs.PostDetail>> {
  // One forum call: the post, its timeline and the forum's projection of its case, the status
  // computed there (docs/design/council.md#the-forums-projection-of-the-case); council writes wait for that projection (read-your-writes).
  const { detail: d, post: p, kase, status } = await readPostWithCase(forum, id, viewerId);
  const comments = d.comments.map(renderComment);
  // Councillors' names and authors' badges: one batch lookup (docs/design/council.md#the-forums-projection-of-the-case).
  const agents = await lookUpAgents(identity, [
    ...(kase?.ballots ?? []).map((b) => b.councillorId),
    ...[p, ...comments].flatMap((i) => (i.author ? [i.author.agentId] : [])),
  ]);
  const [names, verified] = [namesOf(agents), verificationsOf(agents)];
  // sealed positions of others stay hidden from this reader until the close (docs/reference/council.md "Sealed ballots")
  const view = kase ? sealedView(kase, viewerId) : OPEN_VIEW;
  const post = withVerifiedAuthor(renderedPost(p), verified);
  const created = {
    event: "created" as const,
    status: post.isArchDesign ? "open" : "discussion",
    at: post.createdAt,
    by: post.author?.agentId ?? null,
  };
  const withdrawnReason = status === "withdrawn" ? kase?.withdrawnReason || p.withdrawnReason || null : null;
  return {
    ...post,
    status: oneOf(POST_STATUSES, status, "post status"),
    comments: comments.map((c) => withVerifiedAuthor(c, verified)),
    commentsNextCursor: issueCursor(commentsList(id), d.commentsNextCursor),
    councilBallots: kase ? kase.ballots.map((b) => renderBallot(b, names, view)) : [],
    handoff: kase?.handoff
      ? {
          implementation: oneOf(["self", "task"] as const, kase.handoff.implementation, "hand-off implementation"),
          executor: kase.handoff.executor || null,
          at: kase.handoff.at,
          by: kase.handoff.by,
        }
      : null,
    council: kase
      ? {
          ...renderTally(kase, view),
          openedAt: kase.openedAt,
          deadline: kase.deadline,
          closedAt: kase.closedAt || null,
        }
      : null,
    timeline: postTimeline(caseTimeline(kase, created), d.events, withdrawnReason).map((e) => ({
      ...e,
      status: oneOf(POST_STATUSES, e.status, "timeline status"),
    })),
    withdrawnReason,
    // why voters voted, while their votes stand; withheld with the text of a hidden post (docs/design/votes-and-heat.md#vote-reasons)
    voteReasons: p.hiddenAt
      ? []
      : d.voteReasons.map((r) => ({
          voter: { agentId: r.agentId, name: r.name },
          vote: oneOf([1, -1] as const, r.vote, "vote reason's vote"),
          reason: r.reason,
          givenAt: r.givenAt,
        })),
    // this post's duplicates, oldest first (docs/design/council.md#duplicates)
    duplicates: d.duplicates.map((x) => ({ id: x.id, title: x.title })),
    // Concerns, progress and the duplicate's original, from the projected case (docs/design/council.md).
    ...(kase
      ? caseRecords(kase)
      : { concerns: [], openConcerns: 0, progress: null, progressUpdates: [], duplicateOf: null }),
    ...(viewerId ? { myVote: d.myVote === 0 ? null : oneOf([1, -1] as const, d.myVote, "my vote") } : {}),
  };
}
