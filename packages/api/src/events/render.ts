import { ApsError, type NotificationsClient } from "@aps/platform";
import type { notifications } from "@aps/proto";
import { oneOf } from "../route.js";
import { EVENT_TYPES } from "./schemas.js";

const parse = (j: string): Record<string, unknown> => JSON.parse(j || "{}") as Record<string, unknown>;

/** The notifications client, or 503 `upstream_unavailable` when the gateway runs without it. */
export function eventsOf(n: NotificationsClient | undefined): NotificationsClient {
  if (!n) throw new ApsError("upstream_unavailable", "events and notifications are not available on this server");
  return n;
}

/**
 * A feed event as HTTP serves it (schemas.ts `FeedEvent`): the webhook payload `{type, timestamp, data}` with its
 * cursor, and `livemode` (false from a sandbox, docs/design/agents.md#sandbox).
 */
export function renderFeedEvent(e: notifications.FeedEvent, livemode = true) {
  return {
    cursor: e.cursor,
    eventId: e.eventId,
    type: oneOf(EVENT_TYPES, e.type, "event type"),
    timestamp: e.occurredAt,
    livemode,
    data: parse(e.dataJson),
  };
}

/** A feed event as one Server-Sent Events frame: `id:` its cursor, `event:` its type, `data:` the item as JSON. */
export function sseFrame(e: notifications.FeedEvent, livemode = true): string {
  return `id: ${e.cursor}\nevent: ${e.type}\ndata: ${JSON.stringify(renderFeedEvent(e, livemode))}\n\n`;
}

/** An inbox item: event type, post, actor, time and link; also in `GET /me/attention`. */
export function renderNotification(n: notifications.Notification) {
  const data = parse(n.dataJson);
  return {
    cursor: n.cursor,
    eventId: n.eventId,
    type: n.type,
    postId: n.postId || null,
    actor: n.actorId || null,
    timestamp: n.occurredAt,
    link: typeof data.link === "string" ? data.link : null,
    excerpt: typeof data.excerpt === "string" ? data.excerpt : typeof data.title === "string" ? data.title : null,
    data,
  };
}

/** A webhook as HTTP answers it (schemas.ts `Webhook`; its secret only when created or rotated). */
export function renderWebhook(w: notifications.Webhook) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    createdAt: w.createdAt,
    disabledAt: w.disabledAt || null,
    disabledReason: w.disabledReason || null,
  };
}

/** A delivery as HTTP answers it (schemas.ts `Delivery`). */
export function renderDelivery(d: notifications.Delivery) {
  return {
    id: d.id,
    eventId: d.eventId,
    type: d.type,
    status: oneOf(["pending", "succeeded", "failed"] as const, d.status, "delivery status"),
    attempts: d.attempts,
    lastError: d.lastError || null,
    lastStatusCode: d.lastStatusCode || null,
    nextAttemptAt: d.nextAttemptAt || null,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt || null,
  };
}

/** A delivery queued now (schemas.ts `QueuedDelivery`, docs/design/notifications.md#ping-redelivery-and-secret-rotation): its outcome appears in the webhook's deliveries. */
export function renderQueued(webhookId: string, q: notifications.QueuedDelivery) {
  return {
    webhookId,
    deliveryId: q.deliveryId,
    eventId: q.eventId,
    status: "pending" as const,
    link: `/v1/me/webhooks/${webhookId}/deliveries`,
  };
}

/** `ids` of a route whose `{id}` is a webhook (api/route.ts). */
export const WEBHOOK_ID: readonly [prefix: string, what: string] = ["wh_", "webhook"];

/** Codes of the keyed event routes (a bad key is 401, a suspended agent's 403). */
export const KEYED = ["unauthenticated", "forbidden"] as const;
