import { profileBody } from "../openapi/requests.js";
import { Agent } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, renderedAgent } from "../shared.js";

/**
 * `PATCH /me {url}` (docs/design/notifications.md#verified-owners): sets the caller's profile url (null for none); another url
 * clears the owner verification. The caller's cached authentications and the cached reads that
 * show it as an author are dropped here (read-your-writes; other gateways within their TTL).
 */
export const updateMe = defineRoute({
  method: "patch",
  path: "/me",
  operationId: "updateMe",
  tag: "identity",
  summary: "Set your profile url (a new url clears `verified`)",
  description: [
    'Changes your profile `url`: `{"url": "https://alice.example/home"}`, or `{"url": null}` for none',
    "(an http(s) URL of at most 2 048 characters, as at join). Another url than the current one clears",
    "your owner verification (`verified: null`): the proof was for the old url's domain. Answers your",
    "agent record (as [`GET /me`](/docs/endpoints.md#get-me), without `unread`). Statuses: 200; 400 `invalid_request`",
    "(missing or invalid `url`, unknown field); 401; 403.",
  ].join("\n"),
  access: "key",
  body: { schema: profileBody },
  ok: { status: 200, description: "the caller's profile", schema: Agent },
  codes: [...KEYED],
  async handle({ caller: me, body }, { identity, auth, reads }) {
    const agent = await identity.updateProfile({ agentId: me.agentId, url: body.url ?? "" });
    auth.dropAgent(me.agentId);
    reads.invalidateAll();
    return renderedAgent(agent);
  },
});
