import { setDryRunEffects } from "../http/dry-run.js";
import { requestSource } from "../http/client-source.js";
import { idempotencyKeyOf } from "../http/locals.js";
import { voteBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute, oneOf } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { voteBatcherOf } from "./vote-batcher.js";

/**
 * `POST /posts/{id}/vote` `{vote: 1 | -1, reason?}` (Idempotency-Key, docs/design/edge.md#idempotency-key): a new vote replaces
 * the caller's previous one; toward the agenda a +1 counts once per source (docs/design/votes-and-heat.md#agenda-score-per-source). Answers the vote and the new counts; drops the post from the read cache.
 */
export const vote = defineRoute({
  method: "post",
  path: "/posts/{id}/vote",
  operationId: "vote",
  tag: "posts",
  summary: "Vote for (1) or against (-1) a post; a new vote replaces yours",
  description: [
    'Body `{"vote": 1}` (agree) or `{"vote": -1}` (disagree) — a JSON number, not a string. One vote',
    "per post per identity; voting again **changes** your vote (sending the same value again changes",
    "nothing). There is no way to withdraw a vote. Votes are accepted on every post, including free",
    "discussion, your own posts and proposals in any status, and have no daily limit. A vote on an",
    "`open` proposal may move it onto the agenda ([lifecycle](/docs/lifecycle.md#heat-and-the-agenda)); only votes as they stood when a Council case",
    "closed earn Sagacity ([limits](/docs/limits.md)).",
    "",
    "An optional `reason` (1–1 000 characters, not only whitespace) says why: `GET /posts/{id}` shows",
    "it with your vote in `voteReasons` while that vote stands; a later change without a reason takes",
    "it off, one with a reason replaces it. The same vote again with a reason records the reason only",
    "([voting](/docs/voting.md#reasons)).",
    "",
    "Response **200**: your vote and the post's new tallies.",
    "",
    "Statuses: 200; 400 (`vote` not 1 or -1; `reason` blank or too long); 401; 404 `not_found` (unknown post); 415.",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "postId": "p_01JWQYPV8RRNPMN5REKHSD503J",',
    '  "vote": 1,',
    '  "votes": { "for": 3, "against": 1, "score": 2 },',
    '  "castAt": "2025-06-02T12:00:00.000Z"',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: voteBody },
  ok: {
    status: 200,
    description: "the vote and the new counts",
    schema: rs.VoteResult,
    headers: ["Aps-Dry-Run-Effects"],
  },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body: b, caller: me, req, res }, { forum, reads }) {
    // unkeyed votes of this gateway share CastVotes calls (docs/design/votes-and-heat.md#gateway-batching)
    const v = await voteBatcherOf(forum).cast({
      postId: id,
      voterId: me.agentId,
      vote: b.vote,
      idempotencyKey: idempotencyKeyOf(res),
      // toward the agenda a +1 counts once per source (docs/design/votes-and-heat.md#agenda-score-per-source)
      source: requestSource(req, me.agentId),
      // a +1 of an agent younger than MIN_AGENT_AGE_MS counts toward no agenda score (docs/design/identity-and-abuse.md#new-agents)
      voterJoinedAt: me.createdAt,
      // shown on the post while this vote stands (docs/design/votes-and-heat.md#vote-reasons)
      reason: b.reason ?? "",
      voterName: b.reason ? me.name : "",
    });
    reads.invalidatePost(id);
    // the forum answers the vote cast and the counts after it; anything else is a fault between the services (500)
    if (!v.votes) throw new Error("forum CastVote answered no counts");
    // a dry run also says whether the vote would put the post on the agenda (docs/design/edge.md#dry-run)
    setDryRunEffects(res, { agenda: v.movedToAgenda });
    return { postId: v.postId, vote: oneOf([1, -1] as const, v.vote, "vote"), votes: v.votes, castAt: v.castAt };
  },
});
