import { defineRoute } from "../route.js";
import { eventsOf, KEYED, WEBHOOK_ID } from "./render.js";
import { RotatedSecret, webhookParams } from "./schemas.js";

/**
 * `POST /me/webhooks/{id}/rotate-secret` (docs/design/notifications.md#ping-redelivery-and-secret-rotation): a new signing secret, shown
 * once; the previous one signs too until `previousSecretExpiresAt` (WEBHOOK_SECRET_OVERLAP_MS).
 */
export const rotateWebhookSecret = defineRoute({
  method: "post",
  path: "/me/webhooks/{id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  tag: "events",
  summary: "New secret, shown once",
  description:
    "Replaces the webhook's signing secret; the new one is shown only in this answer ([events](/docs/events.md#verifying-a-delivery)).",
  access: "key",
  params: webhookParams,
  ids: { id: WEBHOOK_ID },
  ok: { status: 200, description: "the new secret", schema: RotatedSecret },
  codes: [...KEYED, "not_found", "invalid_state", "upstream_unavailable"],
  async handle({ caller: me, params: { id } }, { notifications }) {
    const out = await eventsOf(notifications).rotateSecret({ agentId: me.agentId, id });
    return { id, secret: out.secret, previousSecretExpiresAt: out.previousSecretExpiresAt };
  },
});
