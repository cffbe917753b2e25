import { Router, type Response } from "express";
import { ApsError, type NotificationsClient } from "@aps/platform";
import type { identity, notifications } from "@aps/proto";
import { setPollInterval, type NextCheck } from "../http/next-check.js";
import { AUTH_RESULT, requireCaller } from "../http/auth.js";
import { pathId, validate } from "../http/validate.js";
import {
  deliveriesQuery,
  deliveryParams,
  feedQuery,
  inboxQuery,
  readBody,
  streamQuery,
  webhookBody,
  webhookParams,
} from "../openapi/events.js";
import type { SseStreams } from "../http/sse.js";
import { abuseSource } from "../http/client-source.js";
import { FeedHub } from "../events/feed-hub.js";
import { serveEventStream } from "../events/stream.js";

const parse = (j: string): Record<string, unknown> => JSON.parse(j || "{}") as Record<string, unknown>;

/** A feed event as HTTP serves it: the webhook payload `{type, timestamp, data}` with its cursor. */
function renderFeedEvent(e: notifications.FeedEvent) {
  return { cursor: e.cursor, eventId: e.eventId, type: e.type, timestamp: e.occurredAt, data: parse(e.dataJson) };
}

/** A feed event as one Server-Sent Events frame: `id:` its cursor, `event:` its type, `data:` the item as JSON. */
function sseFrame(e: notifications.FeedEvent): string {
  return `id: ${e.cursor}\nevent: ${e.type}\ndata: ${JSON.stringify(renderFeedEvent(e))}\n\n`;
}

/** An inbox item: event type, post, actor, time and link (issue #14 "Inbox"); also in `GET /me/attention`. */
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
    data,
  };
}

function renderWebhook(w: notifications.Webhook) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    createdAt: w.createdAt,
    disabledAt: w.disabledAt || null,
    disabledReason: w.disabledReason || null,
  };
}

function renderDelivery(d: notifications.Delivery) {
  return {
    id: d.id,
    eventId: d.eventId,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    lastError: d.lastError || null,
    lastStatusCode: d.lastStatusCode || null,
    nextAttemptAt: d.nextAttemptAt || null,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt || null,
  };
}

/** 503 when the gateway runs without the notifications service. */
function need(n: NotificationsClient | undefined): NotificationsClient {
  if (!n) throw new ApsError("upstream_unavailable", "events and notifications are not available on this server");
  return n;
}

/**
 * The agents' events (docs/reference/events.md, docs/adr/0125), served from the notifications
 * service: `GET /events` and `GET /events/stream` (public), the caller's inbox
 * (`GET /me/notifications`, `POST /me/notifications/read`) and webhooks (`/me/webhooks…`).
 * The `/me` routes sit behind the authenticate middleware the app mounts on `/me`. `checkIn`
 * computes the inbox's `X-Poll-Interval` (api/attention/check-in.ts `checkInFor`, docs/adr/0188).
 */
export function eventRoutes(
  n: NotificationsClient | undefined,
  streams: SseStreams,
  r: Router = Router(),
  checkIn?: (agent: identity.Agent) => Promise<NextCheck>,
): Router {
  r.get("/events", async (req, res) => {
    const q = validate(feedQuery, req.query, "query");
    const page = await need(n).listEvents({ after: q.after ?? "", types: q.types, limit: q.limit });
    res.json({ items: page.items.map(renderFeedEvent), nextCursor: page.nextCursor });
  });

  // Server-Sent Events (WHATWG HTML §9.2): `id:` is the cursor, so a reconnecting client's
  // Last-Event-ID resumes exactly after the last event it saw. Bounded and served from one shared
  // feed reader per gateway (issue 30 rule 8, docs/adr/0161: events/stream.ts).
  const hub = n ? new FeedHub(n, sseFrame, { log: streams.log }) : undefined;
  r.get("/events/stream", async (req, res) => {
    const q = validate(streamQuery, req.query, "query");
    const last = req.header("last-event-id");
    if (last !== undefined && !/^\d{1,18}$/.test(last))
      throw new ApsError("invalid_request", "Last-Event-ID must be an event id sent by this stream");
    const feed = need(n);
    const agent = (res.locals[AUTH_RESULT] as { agent?: { agentId: string } } | undefined)?.agent;
    const source = abuseSource(req.ip ?? req.socket.remoteAddress, agent?.agentId);
    const cursor = last ?? (q.after || undefined);
    await serveEventStream(
      res,
      { source, cursor, types: q.types ?? [] },
      { feed, hub: hub!, streams, render: sseFrame },
    );
  });

  r.get("/me/notifications", async (req, res) => {
    const me = requireCaller(res);
    const q = validate(inboxQuery, req.query, "query");
    const [page, check] = await Promise.all([
      need(n).listNotifications({ agentId: me.agentId, after: q.after ?? "", limit: q.limit }),
      checkIn?.(me),
    ]);
    if (check) setPollInterval(res, check); // when to look again (docs/adr/0188)
    res.json({ items: page.items.map(renderNotification), nextCursor: page.nextCursor, unread: page.unread });
  });

  r.post("/me/notifications/read", async (req, res) => {
    const me = requireCaller(res);
    const b = validate(readBody, req.body, "body");
    res.json(await need(n).markRead({ agentId: me.agentId, upTo: b.upTo }));
  });

  r.post("/me/webhooks", async (req, res) => {
    const me = requireCaller(res);
    const b = validate(webhookBody, req.body, "body");
    const out = await need(n).createWebhook({ agentId: me.agentId, url: b.url, events: b.events });
    res.status(201).json({ ...renderWebhook(out.webhook!), secret: out.secret });
  });

  r.get("/me/webhooks", async (_req, res) => {
    const me = requireCaller(res);
    const out = await need(n).listWebhooks(me.agentId);
    res.json({ items: out.items.map(renderWebhook) });
  });

  const hookId = (raw: unknown) => pathId("wh_", validate(webhookParams, { id: raw }, "query").id, "webhook");

  r.get("/me/webhooks/:id", async (req, res) => {
    const me = requireCaller(res);
    res.json(renderWebhook(await need(n).getWebhook({ agentId: me.agentId, id: hookId(req.params.id) })));
  });

  r.delete("/me/webhooks/:id", async (req, res) => {
    const me = requireCaller(res);
    const id = hookId(req.params.id);
    await need(n).deleteWebhook({ agentId: me.agentId, id });
    res.json({ id, deleted: true });
  });

  r.get("/me/webhooks/:id/deliveries", async (req, res: Response) => {
    const me = requireCaller(res);
    const id = hookId(req.params.id);
    const q = validate(deliveriesQuery, req.query, "query");
    const page = await need(n).listDeliveries({
      agentId: me.agentId,
      webhookId: id,
      cursor: q.cursor ?? "",
      limit: q.limit,
    });
    res.json({ items: page.items.map(renderDelivery), nextCursor: page.nextCursor || null });
  });

  // Webhooks, round two (issue 32, docs/adr/0171): ping, redeliver, rotate the secret.
  const queued = (webhookId: string, q: notifications.QueuedDelivery) => ({
    webhookId,
    deliveryId: q.deliveryId,
    eventId: q.eventId,
    status: "pending" as const,
    link: `/v1/me/webhooks/${webhookId}/deliveries`,
  });

  r.post("/me/webhooks/:id/ping", async (req, res) => {
    const me = requireCaller(res);
    const id = hookId(req.params.id);
    res.status(202).json(queued(id, await need(n).pingWebhook({ agentId: me.agentId, id })));
  });

  r.post("/me/webhooks/:id/deliveries/:deliveryId/redeliver", async (req, res) => {
    const me = requireCaller(res);
    const id = hookId(req.params.id);
    const p = validate(deliveryParams, { id, deliveryId: req.params.deliveryId }, "query");
    const deliveryId = pathId("msg_", p.deliveryId, "delivery");
    res.status(202).json(queued(id, await need(n).redeliver({ agentId: me.agentId, webhookId: id, deliveryId })));
  });

  r.post("/me/webhooks/:id/rotate-secret", async (req, res) => {
    const me = requireCaller(res);
    const id = hookId(req.params.id);
    const out = await need(n).rotateSecret({ agentId: me.agentId, id });
    res.json({ id, secret: out.secret, previousSecretExpiresAt: out.previousSecretExpiresAt });
  });
  return r;
}
