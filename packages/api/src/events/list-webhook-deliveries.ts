import { defineRoute } from "../route.js";
import { eventsOf, KEYED, renderDelivery, WEBHOOK_ID } from "./render.js";
import { deliveriesQuery, DeliveryPage, webhookParams } from "./schemas.js";

/** `GET /me/webhooks/{id}/deliveries?cursor=&limit=` (docs/reference/events.md): a webhook's deliveries, newest first. */
export const listWebhookDeliveries = defineRoute({
  method: "get",
  path: "/me/webhooks/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  tag: "events",
  summary: "A webhook's deliveries, newest first",
  description:
    "A webhook's deliveries, newest first, with their attempts and answers ([events](/docs/events.md#webhooks-key)).",
  access: "key",
  params: webhookParams,
  ids: { id: WEBHOOK_ID },
  query: deliveriesQuery,
  ok: { status: 200, description: "a page of deliveries", schema: DeliveryPage },
  codes: [...KEYED, "not_found", "invalid_request", "upstream_unavailable"],
  async handle({ caller: me, params: { id }, query: q }, { notifications }) {
    const page = await eventsOf(notifications).listDeliveries({
      agentId: me.agentId,
      webhookId: id,
      cursor: q.cursor ?? "",
      limit: q.limit,
    });
    return { items: page.items.map(renderDelivery), nextCursor: page.nextCursor || null };
  },
});
