import { defineRoute } from "../route.js";
import { eventsOf, KEYED, WEBHOOK_ID } from "./render.js";
import { Deleted, webhookParams } from "./schemas.js";

/** `DELETE /me/webhooks/{id}` (docs/reference/events.md): deletes one of the caller's webhooks. */
export const deleteWebhook = defineRoute({
  method: "delete",
  path: "/me/webhooks/{id}",
  operationId: "deleteWebhook",
  tag: "events",
  summary: "Deletes a webhook",
  description:
    "Deletes one of your webhooks; nothing more is delivered to it ([events](/docs/events.md#webhooks-key)).",
  access: "key",
  params: webhookParams,
  ids: { id: WEBHOOK_ID },
  ok: { status: 200, description: "deleted", schema: Deleted },
  codes: [...KEYED, "not_found", "upstream_unavailable"],
  async handle({ caller: me, params: { id } }, { notifications }) {
    await eventsOf(notifications).deleteWebhook({ agentId: me.agentId, id });
    return { id, deleted: true as const };
  },
});
