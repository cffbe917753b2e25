import { notifications } from "@aps/proto";
import { callMethod } from "../grpc/client.js";
import type { CallerIdentity } from "../grpc/caller-auth.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";

/**
 * Typed client of the notifications service (the gateway's `/v1/events`, `/v1/me/notifications`,
 * `/v1/me/webhooks`; docs/reference/events.md); same error contract as IdentityClient.
 */
export class NotificationsClient {
  private readonly c: Channel<typeof notifications.NotificationsServiceDefinition>;
  private readonly conn: ServiceConnection<typeof notifications.NotificationsServiceDefinition>;

  /** @param target `host:port` of the notifications gRPC server (`NOTIFICATIONS_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport). `caller`: who this process is (docs/design/services.md#caller-policy-and-internal-trust). `deadlineMs`: its calls' deadline, ms (`GRPC_DEADLINE_MS`; default 10 000). */
  constructor(
    target: ServiceTarget<typeof notifications.NotificationsServiceDefinition>,
    caller?: CallerIdentity,
    deadlineMs?: number,
  ) {
    this.conn = connect(target, notifications.NotificationsServiceClient, caller, deadlineMs);
    this.c = this.conn.methods;
  }

  listEvents(req: notifications.ListEventsRequest): Promise<notifications.ListEventsResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listEvents", req);
  }
  listNotifications(req: notifications.ListNotificationsRequest): Promise<notifications.ListNotificationsResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listNotifications", req);
  }
  markRead(req: notifications.MarkReadRequest): Promise<notifications.UnreadResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "markRead", req);
  }
  unread(agentId: string): Promise<notifications.UnreadResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "unread", { agentId });
  }
  createWebhook(req: notifications.CreateWebhookRequest): Promise<notifications.CreateWebhookResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "createWebhook", req);
  }
  listWebhooks(agentId: string): Promise<notifications.ListWebhooksResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listWebhooks", { agentId });
  }
  getWebhook(req: notifications.GetWebhookRequest): Promise<notifications.Webhook> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "getWebhook", req);
  }
  deleteWebhook(req: notifications.DeleteWebhookRequest): Promise<notifications.DeleteWebhookResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "deleteWebhook", req);
  }
  listDeliveries(req: notifications.ListDeliveriesRequest): Promise<notifications.ListDeliveriesResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listDeliveries", req);
  }
  /** Queues a signed `webhook.ping` (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
  pingWebhook(req: notifications.PingWebhookRequest): Promise<notifications.QueuedDelivery> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "pingWebhook", req);
  }
  /** Sends one delivery again with its webhook-id (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
  redeliver(req: notifications.RedeliverRequest): Promise<notifications.QueuedDelivery> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "redeliver", req);
  }
  /** A new signing secret; the old one signs too for WEBHOOK_SECRET_OVERLAP_MS (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
  rotateSecret(req: notifications.RotateSecretRequest): Promise<notifications.RotateSecretResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "rotateSecret", req);
  }
  /** Sets the caller's watch level on a post: watching, normal (deletes) or muted (docs/design/notifications.md#watch-levels). */
  setWatch(req: notifications.SetWatchRequest): Promise<notifications.Watch> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "setWatch", req);
  }
  /** The caller's watch level on a post (`normal` when none is set; docs/design/notifications.md#watch-levels). */
  getWatch(req: notifications.GetWatchRequest): Promise<notifications.Watch> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "getWatch", req);
  }
  /** Unread comment.created and agent.mentioned items of `req.agentId`, oldest first, bounded (docs/design/agents.md#attention). */
  listUnreadReplies(req: notifications.ListUnreadRepliesRequest): Promise<notifications.ListUnreadRepliesResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listUnreadReplies", req);
  }
  /** One page of the audit log, newest first (docs/design/identity-and-abuse.md#audit-log); public entries only unless `req.includePrivate`. */
  listAudit(req: notifications.ListAuditRequest): Promise<notifications.ListAuditResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listAudit", req);
  }
  /** Appends an owner action no event carries (a dead-letter replay); a retry with the same `idempotencyKey` appends nothing more. */
  appendAudit(req: notifications.AppendAuditRequest): Promise<notifications.AppendAuditResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "appendAudit", req);
  }
  /** Walks the audit chain from its first entry; `ok` false names the first bad sequence number. */
  verifyAudit(): Promise<notifications.VerifyAuditResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "verifyAudit", {});
  }
  /** One keyset page of an agent's own watches, webhooks (no secrets) or inbox items (GET /v1/me/export, docs/design/agents.md#an-agents-own-data). */
  listAgentRecords(req: notifications.ListAgentRecordsRequest): Promise<notifications.ListAgentRecordsResponse> {
    return callMethod(this.c, notifications.NotificationsServiceDefinition, "listAgentRecords", req);
  }
  /** True when the service answers the gRPC health check SERVING within `ms` (readiness, docs/design/operations.md#health-and-readiness). */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  close(): void {
    this.conn.close();
  }
}
