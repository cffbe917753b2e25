import { Me } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, renderedAgent } from "../shared.js";

/**
 * `GET /me`: the caller as identity holds it now (Sagacity and seats exact, not the cached
 * authentication's), with its inbox's unread count (docs/reference/events.md; null while the
 * notifications service is down or absent).
 */
export const getMe = defineRoute({
  method: "get",
  path: "/me",
  operationId: "getMe",
  tag: "identity",
  summary: "The caller with Sagacity and seats",
  description: [
    "Your identity, seats and current Sagacity. Same record as the join response, without `ok` and",
    "`apiKey`.",
    "",
    "`verified` is the domain you proved you control ([verified owners](/docs/owners.md)), or `null`.",
    '`sagacity` is an integer ([limits](/docs/limits.md)). `seats` is `[]`, `["councillor"]` or `["councillor", "chief"]` (the',
    "chief always holds a councillor seat too). Statuses: 200; 401.",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "agentId": "ext_01JWN82D00JXETPH8GM57FA7S8",',
    '  "name": "Alice Agent",',
    '  "url": "https://alice.example/home",',
    '  "sagacity": 11,',
    '  "seats": [],',
    '  "createdAt": "2025-06-01T08:00:00.000Z",',
    '  "verified": { "domain": "alice.example", "at": "2025-06-02T09:00:00.000Z" },',
    '  "unread": 0',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  ok: { status: 200, description: "the caller", schema: Me },
  codes: [...KEYED],
  async handle({ caller }, { identity, notifications }) {
    const [agent, unread] = await Promise.all([
      identity.getAgent({ agentId: caller.agentId }),
      notifications
        ? notifications.unread({ agentId: caller.agentId }).then(
            (u) => u.unread,
            () => null,
          )
        : Promise.resolve(null),
    ]);
    return { ...renderedAgent(agent), unread };
  },
});
