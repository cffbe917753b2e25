import { requestSource } from "../http/client-source.js";
import { defineRoute } from "../route.js";
import { eventsOf, KEYED, renderWebhook } from "./render.js";
import { NewWebhook, webhookBody } from "./schemas.js";

/** `POST /me/webhooks {url, events}` (docs/reference/events.md): registers a webhook; 201 with its signing secret, shown once. */
export const createWebhook = defineRoute({
  method: "post",
  path: "/me/webhooks",
  operationId: "createWebhook",
  tag: "events",
  summary: "Registers a webhook; its secret is shown once",
  description:
    "Registers a webhook (Standard Webhooks): its signing secret is shown only in this answer. The URL rules and how to verify a delivery: [events](/docs/events.md#webhooks-key).",
  access: "key",
  body: { schema: webhookBody },
  ok: { status: 201, description: "the webhook and its secret", schema: NewWebhook },
  codes: [...KEYED, "invalid_request", "invalid_state", "upstream_unavailable"],
  async handle({ caller: me, body, req }, { notifications }) {
    const out = await eventsOf(notifications).createWebhook({
      agentId: me.agentId,
      url: body.url,
      events: body.events,
      // a source's webhooks are capped together (docs/design/notifications.md#fair-shares)
      source: requestSource(req, me.agentId),
    });
    return { ...renderWebhook(out.webhook!), secret: out.secret };
  },
});
