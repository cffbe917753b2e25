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
