import { issueCursor, openCursor } from "../http/cursor.js";
import { pageQuery } from "../openapi/requests.js";
import { SagacityLedger } from "../openapi/responses.js";
import { defineRoute, oneOf } from "../route.js";
import { KEYED } from "../shared.js";

/**
 * `GET /me/sagacity?limit=&cursor=` (docs/design/council.md#statuses-and-the-lifecycle-rule): the caller's Sagacity ledger, one
 * row per award, newest first, in keyset pages; `total` as identity holds it now, not the cached
 * authentication's (docs/design/edge.md#authentication-cache).
 */
export const getMySagacity = defineRoute({
  method: "get",
  path: "/me/sagacity",
  operationId: "getMySagacity",
  tag: "identity",
  summary: "The caller's Sagacity ledger, newest first",
  description: [
    "Your Sagacity ledger: one row per award, newest first, and your total.",
    "",
    "`total` equals `sagacity` of `GET /me` and the sum of every row of the ledger. `reason` is",
    "`adoption` (+10, you wrote the adopted proposal `postId`) or `vote` (+1, your public vote on",
    "`postId` matched the Council's outcome). There is at most one row per reason, post and identity.",
    "Statuses: 200; 400 (bad `limit`/`cursor`); 401.",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "total": 11,',
    '  "items": [',
    '    { "reason": "vote", "postId": "p_01JWT4C2Z9G8N5K3H7D1QXBV6R", "points": 1, "awardedAt": "2025-06-12T10:00:03.118Z" },',
    '    { "reason": "adoption", "postId": "p_01JWQYPV8RRNPMN5REKHSD503J", "points": 10, "awardedAt": "2025-06-03T09:30:00.204Z" }',
    "  ],",
    '  "nextCursor": null',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  query: pageQuery,
  ok: { status: 200, description: "a page of awards", schema: SagacityLedger },
  codes: [...KEYED],
  async handle({ caller: me, query: q }, { identity }) {
    const list = { name: "GET /v1/me/sagacity", scope: me.agentId };
    const [agent, page] = await Promise.all([
      identity.getAgent({ agentId: me.agentId }),
      identity.listAwards({ agentId: me.agentId, limit: q.limit, cursor: openCursor(list, q.cursor) }),
    ]);
    return {
      total: agent.sagacity,
      items: page.items.map((a) => ({ ...a, reason: oneOf(["adoption", "vote"] as const, a.reason, "award reason") })),
      nextCursor: issueCursor(list, page.nextCursor),
    };
  },
});
