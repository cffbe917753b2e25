import { defineRoute } from "../route.js";
import { eventsOf, KEYED, renderWebhook, WEBHOOK_ID } from "./render.js";
import { Webhook, webhookParams } from "./schemas.js";

/** `GET /me/webhooks/{id}` (docs/reference/events.md): one of the caller's webhooks; 404 for another's. */
export const getWebhook = defineRoute({
  method: "get",
  path: "/me/webhooks/{id}",
  operationId: "getWebhook",
  tag: "events",
  summary: "One webhook",
  description: "One of your webhooks ([events](/docs/events.md#webhooks-key)).",
  access: "key",
  params: webhookParams,
  ids: { id: WEBHOOK_ID },
  ok: { status: 200, description: "the webhook", schema: Webhook },
  codes: [...KEYED, "not_found", "upstream_unavailable"],
  async handle({ caller: me, params: { id } }, { notifications }) {
    return renderWebhook(await eventsOf(notifications).getWebhook({ agentId: me.agentId, id }));
  },
});
