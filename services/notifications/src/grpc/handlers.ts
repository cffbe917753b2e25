import { z } from "zod";
import {
  checkTarget,
  LIMITS,
  parseRequest,
  unary,
  type AuditJson,
  type AuditLink,
  type Logger,
  type TargetPolicy,
} from "@aps/platform";
import type { notifications } from "@aps/proto";
import { PUBLIC_EVENT_TYPES } from "../events/public-events.js";
import type { AuditStore } from "../store/audit.js";
import { parseSeqCursor, type FeedStore } from "../store/feed.js";
import type { InboxStore } from "../store/inbox.js";
import { WATCH_LEVELS, type WatchRow, type WatchStore } from "../store/watches.js";
import type { WebhookStore } from "../store/webhooks.js";
import { newSecret } from "../webhooks/signature.js";

const agentId = z.string().min(1).max(64);
const cursor = z.string().max(32);
const limit = z.number().int().min(1).max(LIMITS.listMax);
const publicType = z.enum(PUBLIC_EVENT_TYPES);
/** A subscription: public types, or `["*"]` for all. */
const subscription = z
  .array(z.union([publicType, z.literal("*")]))
  .min(1)
  .max(PUBLIC_EVENT_TYPES.length + 1)
  .transform((t) => [...new Set(t)]);

/** What the handlers read and write. */
export interface NotificationsStores {
  feed: FeedStore;
  inbox: InboxStore;
  webhooks: WebhookStore;
  watches: WatchStore;
  audit: AuditStore;
}

/** The SSRF settings of webhook registration (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS; DNS seam for tests). */
export type { TargetPolicy };

const json = (d: Record<string, unknown>) => JSON.stringify(d);

/** Webhook settings the handlers apply beyond the SSRF policy. */
export interface WebhookHandlerOptions {
  /** WEBHOOK_SECRET_OVERLAP_MS: how long a rotated-out secret still signs, ms (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
  secretOverlapMs: number;
  /** WEBHOOKS_PER_SOURCE: webhooks one client source may hold (docs/design/notifications.md#fair-shares); unbounded when absent. */
  perSource?: number;
}

const hookId = z.string().min(1).max(64);
const postId = z.string().regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/, "postId: p_ + ULID");
/** An audit entry on the wire (docs/design/identity-and-abuse.md#audit-log). */
const auditEntry = (e: AuditLink): notifications.AuditEntry => ({
  seq: Number(e.seq),
  at: e.at,
  actor: e.actor,
  action: e.action,
  targetType: e.targetType,
  targetId: e.targetId,
  beforeJson: JSON.stringify(e.before),
  afterJson: JSON.stringify(e.after),
  reason: e.reason,
  visibility: e.visibility,
  sealed: e.sealed,
  prevHash: e.prevHash,
  hash: e.hash,
});
/** A small JSON object of changed fields (≤ 4 KiB as text). */
const auditJson = z
  .string()
  .max(4096)
  .transform((t, ctx) => {
    try {
      const v: unknown = JSON.parse(t || "{}");
      if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, AuditJson>;
    } catch {
      // refused below
    }
    ctx.addIssue({ code: "custom", message: "must be a JSON object" });
    return z.NEVER;
  });
const auditFilter = z.string().max(64);

const watch = (w: WatchRow): notifications.Watch => ({ postId: w.postId, level: w.level, updatedAt: w.since });

/** gRPC handlers of aps.notifications.v1.NotificationsService (docs/reference/events.md). */
export function notificationsHandlers(
  stores: NotificationsStores,
  policy: TargetPolicy,
  log: Logger,
  hooks: WebhookHandlerOptions = { secretOverlapMs: 86_400_000 },
) {
  return {
    listEvents: unary(log, async (req: notifications.ListEventsRequest): Promise<notifications.ListEventsResponse> => {
      const q = parseRequest(z.object({ after: cursor, types: z.array(publicType).max(20), limit }), req);
      const after = parseSeqCursor(q.after, "after");
      // the head first: a short page then covers every event up to max(head, its last item)
      const head = await stores.feed.head();
      const rows = await stores.feed.list(after, q.types, q.limit);
      // past every event ever numbered: a cursor never issued (docs/design/edge.md#validation)
      if (rows.length === 0 && after > 0n) await stores.feed.refuseUnissued(after, "after");
      return {
        items: rows.map((r) => ({
          cursor: r.cursor,
          eventId: r.eventId,
          type: r.type,
          occurredAt: r.occurredAt,
          dataJson: json(r.data),
        })),
        nextCursor: rows.at(-1)?.cursor ?? (q.after || "0"),
        head,
      };
    }),
    listNotifications: unary(
      log,
      async (req: notifications.ListNotificationsRequest): Promise<notifications.ListNotificationsResponse> => {
        const q = parseRequest(z.object({ agentId, after: cursor, limit }), req);
        const [rows, state] = await Promise.all([
          stores.inbox.list(q.agentId, q.after, q.limit),
          stores.inbox.unread(q.agentId),
        ]);
        return {
          items: rows.map((r) => ({ ...r, dataJson: json(r.data) })),
          nextCursor: rows.at(-1)?.cursor ?? (q.after || "0"),
          unread: state.unread,
        };
      },
    ),
    markRead: unary(log, async (req: notifications.MarkReadRequest): Promise<notifications.UnreadResponse> => {
      const q = parseRequest(z.object({ agentId, upTo: cursor.min(1) }), req);
      return stores.inbox.markRead(q.agentId, q.upTo);
    }),
    listUnreadReplies: unary(
      log,
      async (req: notifications.ListUnreadRepliesRequest): Promise<notifications.ListUnreadRepliesResponse> => {
        const q = parseRequest(z.object({ agentId, limit: z.number().int().min(1).max(100) }), req);
        const page = await stores.inbox.unreadReplies(q.agentId, q.limit);
        return { items: page.items.map((r) => ({ ...r, dataJson: json(r.data) })), more: page.more };
      },
    ),
    listAudit: unary(log, async (req: notifications.ListAuditRequest): Promise<notifications.ListAuditResponse> => {
      const q = parseRequest(
        z.object({
          includePrivate: z.boolean(),
          before: cursor,
          limit: z.number().int().min(1).max(100),
          target: auditFilter,
          actor: auditFilter,
        }),
        req,
      );
      const page = await stores.audit.list({ ...q, before: parseSeqCursor(q.before, "before") });
      return { items: page.items.map(auditEntry), nextCursor: page.next };
    }),
    appendAudit: unary(
      log,
      async (req: notifications.AppendAuditRequest): Promise<notifications.AppendAuditResponse> => {
        const q = parseRequest(
          z.object({
            idempotencyKey: z.string().min(1).max(128),
            actor: z.string().min(1).max(64),
            action: z.string().regex(/^[a-z_]+\.[a-z_]+$/),
            targetType: z.string().min(1).max(32),
            targetId: z.string().min(1).max(128),
            beforeJson: auditJson,
            afterJson: auditJson,
            reason: z.string().max(2000),
          }),
          req,
        );
        const r = await stores.audit.append({
          sourceId: `append:${q.idempotencyKey}`,
          at: new Date().toISOString(),
          actor: q.actor,
          action: q.action,
          targetType: q.targetType,
          targetId: q.targetId,
          before: q.beforeJson,
          after: q.afterJson,
          reason: q.reason,
          // the only caller is the gateway recording an owner action (caller policy)
          visibility: "private",
          sealed: false,
        });
        return { seq: Number(r.seq) };
      },
    ),
    verifyAudit: unary(log, async (): Promise<notifications.VerifyAuditResponse> => {
      const w = await stores.audit.verify();
      return {
        ok: !w.firstBad,
        entries: w.entries,
        firstBadSeq: w.firstBad ? Number(w.firstBad.seq) : 0,
        problem: w.firstBad?.problem ?? "",
      };
    }),
    listAgentRecords: unary(log, async (req: notifications.ListAgentRecordsRequest) => stores.inbox.agentRecords(req)),
    unread: unary(log, async (req: notifications.UnreadRequest): Promise<notifications.UnreadResponse> => {
      const q = parseRequest(z.object({ agentId }), req);
      return stores.inbox.unread(q.agentId);
    }),
    createWebhook: unary(
      log,
      async (req: notifications.CreateWebhookRequest): Promise<notifications.CreateWebhookResponse> => {
        const q = parseRequest(
          z.object({ agentId, url: z.string().min(1).max(2048), events: subscription, source: z.string().max(128) }),
          req,
        );
        const target = await checkTarget(q.url, policy);
        const secret = newSecret();
        const webhook = await stores.webhooks.create(q.agentId, target.url.toString(), q.events, secret, {
          source: q.source,
          max: hooks.perSource ?? Infinity,
        });
        return { webhook, secret };
      },
    ),
    listWebhooks: unary(
      log,
      async (req: notifications.ListWebhooksRequest): Promise<notifications.ListWebhooksResponse> => {
        const q = parseRequest(z.object({ agentId }), req);
        return { items: await stores.webhooks.list(q.agentId) };
      },
    ),
    getWebhook: unary(log, async (req: notifications.GetWebhookRequest): Promise<notifications.Webhook> => {
      const q = parseRequest(z.object({ agentId, id: z.string().min(1).max(64) }), req);
      return stores.webhooks.get(q.agentId, q.id);
    }),
    deleteWebhook: unary(
      log,
      async (req: notifications.DeleteWebhookRequest): Promise<notifications.DeleteWebhookResponse> => {
        const q = parseRequest(z.object({ agentId, id: z.string().min(1).max(64) }), req);
        await stores.webhooks.delete(q.agentId, q.id);
        return {};
      },
    ),
    listDeliveries: unary(
      log,
      async (req: notifications.ListDeliveriesRequest): Promise<notifications.ListDeliveriesResponse> => {
        const q = parseRequest(z.object({ agentId, webhookId: z.string().min(1).max(64), cursor, limit }), req);
        const rows = await stores.webhooks.deliveries(q.agentId, q.webhookId, q.cursor, q.limit);
        return {
          items: rows,
          nextCursor: rows.length === q.limit ? rows.at(-1)!.cursor : "",
        };
      },
    ),
    // Ping, redelivery and secret rotation (docs/design/notifications.md#ping-redelivery-and-secret-rotation).
    pingWebhook: unary(log, async (req: notifications.PingWebhookRequest): Promise<notifications.QueuedDelivery> => {
      const q = parseRequest(z.object({ agentId, id: hookId }), req);
      return stores.webhooks.ping(q.agentId, q.id);
    }),
    redeliver: unary(log, async (req: notifications.RedeliverRequest): Promise<notifications.QueuedDelivery> => {
      const q = parseRequest(z.object({ agentId, webhookId: hookId, deliveryId: hookId }), req);
      return stores.webhooks.redeliver(q.agentId, q.webhookId, q.deliveryId);
    }),
    rotateSecret: unary(
      log,
      async (req: notifications.RotateSecretRequest): Promise<notifications.RotateSecretResponse> => {
        const q = parseRequest(z.object({ agentId, id: hookId }), req);
        const secret = newSecret();
        const until = await stores.webhooks.rotateSecret(q.agentId, q.id, secret, hooks.secretOverlapMs);
        return { secret, previousSecretExpiresAt: until };
      },
    ),
    // Watch levels (docs/design/notifications.md#watch-levels); the gateway checked the post exists.
    setWatch: unary(log, async (req: notifications.SetWatchRequest): Promise<notifications.Watch> => {
      const q = parseRequest(
        z.object({
          agentId,
          postId,
          level: z.enum(WATCH_LEVELS),
          watcherSagacity: z.number().int().min(0),
          watcherJoinedAt: z.union([z.literal(""), z.iso.datetime({ offset: true })]),
        }),
        req,
      );
      return watch(
        await stores.watches.set(q.agentId, q.postId, q.level, {
          sagacity: q.watcherSagacity,
          joinedAt: q.watcherJoinedAt,
        }),
      );
    }),
    getWatch: unary(log, async (req: notifications.GetWatchRequest): Promise<notifications.Watch> => {
      const q = parseRequest(z.object({ agentId, postId }), req);
      return watch(await stores.watches.get(q.agentId, q.postId));
    }),
  };
}
