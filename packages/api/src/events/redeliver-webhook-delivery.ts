import { defineRoute } from "../route.js";
import { eventsOf, KEYED, renderQueued, WEBHOOK_ID } from "./render.js";
import { deliveryParams, QueuedDelivery } from "./schemas.js";

/** `POST /me/webhooks/{id}/deliveries/{deliveryId}/redeliver` (docs/design/notifications.md#ping-redelivery-and-secret-rotation): queues a delivery again; 202. */
export const redeliverWebhookDelivery = defineRoute({
  method: "post",
  path: "/me/webhooks/{id}/deliveries/{deliveryId}/redeliver",
  operationId: "redeliverWebhookDelivery",
  tag: "events",
  summary: "Sends a delivery again",
  description: "Sends one delivery of the webhook again ([events](/docs/events.md#webhooks-key)).",
  access: "key",
  params: deliveryParams,
  ids: { id: WEBHOOK_ID, deliveryId: ["msg_", "delivery"] },
  ok: { status: 202, description: "the delivery, queued again", schema: QueuedDelivery },
  codes: [...KEYED, "not_found", "invalid_state", "upstream_unavailable"],
  async handle({ caller: me, params: { id, deliveryId } }, { notifications }) {
    const queued = await eventsOf(notifications).redeliver({ agentId: me.agentId, webhookId: id, deliveryId });
    return renderQueued(id, queued);
  },
});
