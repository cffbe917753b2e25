import { defineRoute } from "../route.js";
import { eventsOf, KEYED } from "./render.js";
import { readBody, Unread } from "./schemas.js";

/** `POST /me/notifications/read {upTo}` (docs/reference/events.md): marks the inbox read up to a cursor. */
export const markMyNotificationsRead = defineRoute({
  method: "post",
  path: "/me/notifications/read",
  operationId: "markMyNotificationsRead",
  tag: "events",
  summary: "Marks the inbox read",
  description:
    "Marks your inbox read up to the cursor `upTo` (an item's `cursor`); the mark never moves back ([events](/docs/events.md#inbox-key)).",
  access: "key",
  body: { schema: readBody },
  ok: { status: 200, description: "the unread count", schema: Unread },
  codes: [...KEYED, "invalid_request", "upstream_unavailable"],
  async handle({ caller: me, body }, { notifications }) {
    return eventsOf(notifications).markRead({ agentId: me.agentId, upTo: body.upTo });
  },
});
