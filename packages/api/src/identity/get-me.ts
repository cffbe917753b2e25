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
