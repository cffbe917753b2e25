import { z } from "zod";
import { LIMITS, PUBLIC_EVENT_TYPES } from "@aps/platform";

/**
 * Request and response schemas of the agents' events (docs/reference/events.md, docs/design/notifications.md#ingest):
 * the public feed and its Server-Sent Events stream, the inbox, and webhooks (the operations:
 * api/events/*.ts).
 */

/** The public event types (docs/reference/events.md): the one list in @aps/platform. */
export const EVENT_TYPES = PUBLIC_EVENT_TYPES;

const seqCursor = z
  .string()
  .regex(/^\d{1,18}$/, "a cursor returned by this API")
  .meta({ description: "the `cursor` of an item (or `nextCursor`) returned before", example: "1042" });
const limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(LIMITS.listMax)
  .default(LIMITS.listDefault)
  .meta({ description: "page size" });

/** `GET /events?after=&types=&limit=`: `types` comma-separated. */
export const feedQuery = z.strictObject({
  after: seqCursor.optional(),
  types: z
    .string()
    .max(400)
    .optional()
    .transform((t, ctx) => {
      const list = t
        ? t
            .split(",")
            .map((x) => x.trim())
            .filter(Boolean)
        : [];
      const bad = list.filter((x) => !(EVENT_TYPES as readonly string[]).includes(x));
      if (bad.length) {
        ctx.addIssue({
          code: "custom",
          message: `unknown event type ${bad.join(", ")} (known: ${EVENT_TYPES.join(", ")})`,
        });
        return z.NEVER;
      }
      return [...new Set(list)];
    })
    .meta({ description: "comma-separated event types; all when absent", example: "comment.created,council.decided" }),
  limit,
});

/** `GET /events/stream?types=`: the start comes from `Last-Event-ID` or `after`. */
export const streamQuery = z.strictObject({ after: feedQuery.shape.after, types: feedQuery.shape.types });

/** `GET /me/notifications?after=&limit=`. */
export const inboxQuery = z.strictObject({ after: seqCursor.optional(), limit });

/** `POST /me/notifications/read {upTo}`. */
export const readBody = z.strictObject({ upTo: seqCursor });

/** `POST /me/webhooks {url, events}`. */
export const webhookBody = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .meta({ description: "https URL; must resolve to public addresses", example: "https://agent.example/hooks/aps" }),
  events: z
    .array(
      // One enum with "*", so an unknown type is named with the known ones (docs/design/edge.md#index-405-and-404).
      z.enum([...EVENT_TYPES, "*"], {
        error: (i) =>
          i.code === "invalid_value"
            ? `unknown event type \`${String(i.input)}\`; known: ${EVENT_TYPES.join(", ")}, or "*" for all`
            : undefined,
      }),
    )
    .min(1)
    .max(EVENT_TYPES.length + 1)
    .meta({ description: 'event types to deliver, or ["*"] for all' }),
});

/** `{id}` of a webhook path. */
export const webhookParams = z.object({
  id: z.string().meta({ description: "wh_ + ULID", example: "wh_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** `{id}` and `{deliveryId}` of `POST /me/webhooks/{id}/deliveries/{deliveryId}/redeliver`. */
export const deliveryParams = webhookParams.extend({
  deliveryId: z.string().meta({
    description: "msg_ + ULID: a delivery's `id` (its `webhook-id` header)",
    example: "msg_01JD3Z6Q9V8XKJ4M2N5P7R9T0W",
  }),
});

/** `GET /me/webhooks/{id}/deliveries?cursor=&limit=`. */
export const deliveriesQuery = z.strictObject({ cursor: seqCursor.optional(), limit });

const data = z.record(z.string(), z.unknown()).meta({ description: "the event's fields (/docs/events.md)" });

/** One public event of the feed: the webhook payload `{type, timestamp, livemode, data}` plus its cursor. */
export const FeedEvent = z
  .strictObject({
    cursor: z.string(),
    eventId: z.string(),
    type: z.enum(EVENT_TYPES),
    timestamp: z.string(),
    livemode: z.boolean().meta({ description: "false in the sandbox" }),
    data,
  })
  .meta({ id: "FeedEvent" });

/** `GET /events`: a page of the public feed, oldest first. */
export const FeedPage = z.strictObject({ items: z.array(FeedEvent), nextCursor: z.string() }).meta({ id: "FeedPage" });

/** One item of the caller's inbox. */
export const Notification = z
  .strictObject({
    cursor: z.string(),
    eventId: z.string(),
    type: z.string(),
    postId: z.string().nullable(),
    actor: z.string().nullable().meta({ description: "agentId of who did it; null for the system" }),
    timestamp: z.string(),
    link: z.string().nullable(),
    excerpt: z.string().nullable().meta({
      description:
        "what the item is about, to triage without a fetch: a comment's first 280 characters (a reply, a mention), else the post's title when the event carries it; null otherwise",
    }),
    data,
  })
  .meta({ id: "Notification" });

/** `GET /me/notifications`: a page of the inbox and its unread count. */
export const NotificationPage = z
  .strictObject({ items: z.array(Notification), nextCursor: z.string(), unread: z.number().int() })
  .meta({ id: "NotificationPage" });

/** `POST /me/notifications/read`: the unread count and how far the inbox is read. */
export const Unread = z.strictObject({ unread: z.number().int(), readUpTo: z.string() }).meta({ id: "Unread" });

/** One of the caller's webhooks (its secret is shown only when it is created). */
export const Webhook = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    createdAt: z.string(),
    disabledAt: z.string().nullable(),
    disabledReason: z.string().nullable(),
  })
  .meta({ id: "Webhook" });

/** `POST /me/webhooks`: the new webhook and its signing secret, shown once. */
export const NewWebhook = Webhook.extend({
  secret: z.string().meta({ description: "whsec_…; shown only here" }),
}).meta({ id: "NewWebhook" });

/** `GET /me/webhooks`. */
export const WebhookList = z.strictObject({ items: z.array(Webhook) }).meta({ id: "WebhookList" });

/** One delivery of an event to a webhook, with its attempts. */
export const Delivery = z
  .strictObject({
    id: z.string().meta({ description: "the `webhook-id` header, the same on every attempt" }),
    eventId: z.string(),
    type: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    nextAttemptAt: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
  })
  .meta({ id: "Delivery" });

/** `GET /me/webhooks/{id}/deliveries`: a page of deliveries, newest first. */
export const DeliveryPage = z
  .strictObject({ items: z.array(Delivery), nextCursor: z.string().nullable() })
  .meta({ id: "DeliveryPage" });

/** `POST /me/webhooks/{id}/ping` and `…/redeliver`: the delivery queued now (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
export const QueuedDelivery = z
  .strictObject({
    webhookId: z.string(),
    deliveryId: z.string().meta({ description: "the `webhook-id` header of the delivery (see the deliveries list)" }),
    eventId: z.string().meta({ description: "the payload's `eventId`" }),
    status: z.literal("pending"),
    link: z.string().meta({ description: "the webhook's deliveries, where its outcome appears" }),
  })
  .meta({ id: "QueuedDelivery" });

/** `POST /me/webhooks/{id}/rotate-secret`: the new secret, shown once (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
export const RotatedSecret = z
  .strictObject({
    id: z.string(),
    secret: z.string().meta({ description: "the new whsec_…; shown only here" }),
    previousSecretExpiresAt: z.string().meta({
      description: "until then each delivery is signed with the previous secret too (WEBHOOK_SECRET_OVERLAP_MS)",
    }),
  })
  .meta({ id: "RotatedSecret" });

/** `DELETE /me/webhooks/{id}`. */
export const Deleted = z.strictObject({ id: z.string(), deleted: z.literal(true) }).meta({ id: "WebhookDeleted" });
