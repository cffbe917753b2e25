import { defineRoute } from "../route.js";
import { eventsOf, KEYED, renderWebhook } from "./render.js";
import { WebhookList } from "./schemas.js";

/** `GET /me/webhooks` (docs/reference/events.md): the caller's webhooks. */
export const listWebhooks = defineRoute({
  method: "get",
  path: "/me/webhooks",
  operationId: "listWebhooks",
  tag: "events",
  summary: "The caller's webhooks",
  description: "Your webhooks ([events](/docs/events.md#webhooks-key)).",
  access: "key",
  ok: { status: 200, description: "the webhooks", schema: WebhookList },
  codes: [...KEYED, "upstream_unavailable"],
  async handle({ caller: me }, { notifications }) {
    const out = await eventsOf(notifications).listWebhooks({ agentId: me.agentId });
    return { items: out.items.map(renderWebhook) };
  },
});
