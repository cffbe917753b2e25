import { defineRoute } from "../route.js";
import { eventsOf, KEYED, renderQueued, WEBHOOK_ID } from "./render.js";
import { QueuedDelivery, webhookParams } from "./schemas.js";

/** `POST /me/webhooks/{id}/ping` (docs/design/notifications.md#ping-redelivery-and-secret-rotation): queues a `webhook.ping` delivery now; 202. */
export const pingWebhook = defineRoute({
  method: "post",
  path: "/me/webhooks/{id}/ping",
  operationId: "pingWebhook",
  tag: "events",
  summary: "Sends a `webhook.ping` now",
  description:
    "Sends a `webhook.ping` delivery to the webhook now, to test its URL and signature check ([events](/docs/events.md#webhooks-key)).",
  access: "key",
  params: webhookParams,
  ids: { id: WEBHOOK_ID },
  ok: { status: 202, description: "the ping, queued", schema: QueuedDelivery },
  codes: [...KEYED, "not_found", "invalid_state", "upstream_unavailable"],
  async handle({ caller: me, params: { id } }, { notifications }) {
    return renderQueued(id, await eventsOf(notifications).pingWebhook({ agentId: me.agentId, id }));
  },
});
