import type pg from "pg";
import { afterCommit, ApsError, newId, withTransaction, type Tx } from "@aps/platform";
import { redactWebhookBody } from "../events/redact.js";
import { FEED_LOCK, parseSeqCursor } from "./feed.js";
import { hiddenAmong } from "./hidden.js";

/** At most this many webhooks per agent. */
export const MAX_WEBHOOKS_PER_AGENT = 5;

/**
 * Who registers a webhook, for the per-source cap (docs/design/notifications.md#fair-shares): the
 * caller's client source ("" counts toward none) and the most webhooks it may hold (WEBHOOKS_PER_SOURCE).
 */
export interface WebhookSource {
  source: string;
  max: number;
}

/** A webhook as its owner sees it (never its secret after creation). */
export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  createdAt: string;
  disabledAt: string;
  disabledReason: string;
}

/** One delivery of a public event to a webhook (`id` is the `webhook-id` header). */
export interface DeliveryRow {
  cursor: string;
  id: string;
  eventId: string;
  type: string;
  status: string;
  attempts: number;
  lastError: string;
  lastStatusCode: number;
  nextAttemptAt: string;
  createdAt: string;
  deliveredAt: string;
}

const ISO = (col: string) => `coalesce(to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '')`;
const HOOK_COLS = `id, url, events, ${ISO("created_at")} AS created_at, ${ISO("disabled_at")} AS disabled_at, coalesce(disabled_reason, '') AS disabled_reason`;

interface HookDbRow {
  id: string;
  url: string;
  events: string[];
  created_at: string;
  disabled_at: string;
  disabled_reason: string;
}
const toHook = (r: HookDbRow): WebhookRow => ({
  id: r.id,
  url: r.url,
  events: r.events,
  createdAt: r.created_at,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
});

/** A delivery queued by `ping` or `redeliver`: its `webhook-id` and the event id of its payload. */
export interface QueuedDelivery {
  deliveryId: string;
  eventId: string;
}

/** The type of the test event `ping` sends (not a feed event; docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
export const PING_TYPE = "webhook.ping";

/**
 * Locks one of the agent's webhooks in `tx` for a change that queues or signs deliveries;
 * `not_found` for another agent's or an unknown id, `invalid_state` (409) when it is disabled
 * (nothing is sent to a disabled endpoint: register it again).
 */
async function lockEnabled(tx: Tx, agentId: string, id: string): Promise<{ url: string }> {
  const r = await tx.query<{ url: string; disabled: boolean; reason: string }>(
    `SELECT url, disabled_at IS NOT NULL AS disabled, coalesce(disabled_reason, '') AS reason
     FROM webhooks WHERE id = $1 AND agent_id = $2 FOR UPDATE`,
    [id, agentId],
  );
  const hook = r.rows[0];
  if (!hook) throw new ApsError("not_found", `webhook ${id} not found`);
  if (hook.disabled)
    throw new ApsError(
      "invalid_state",
      `webhook ${id} is disabled (${hook.reason}); nothing is sent to it: delete it and register the endpoint again`,
    );
  return { url: hook.url };
}

/** At most this many pings and redeliveries of one webhook wait to be sent at once (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
export const MAX_PENDING_ON_DEMAND = 5;

/**
 * `invalid_state` (409) when MAX_PENDING_ON_DEMAND pings or redeliveries of webhook `id` are
 * still pending: on-demand sends cannot pile up behind a slow or dead endpoint (the abuse
 * budgets stay whole: each one is also one rate-limited request). Reads the endpoint's pending
 * deliveries through `webhook_deliveries_endpoint_due`.
 */
async function capOnDemand(tx: Tx, id: string): Promise<void> {
  const r = await tx.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' AND single_attempt",
    [id],
  );
  if (r.rows[0]!.n >= MAX_PENDING_ON_DEMAND)
    throw new ApsError(
      "invalid_state",
      `${MAX_PENDING_ON_DEMAND} pings or redeliveries of webhook ${id} are still pending; see GET /v1/me/webhooks/${id}/deliveries and try again when they are done`,
    );
}

/** Makes endpoint `id` due now at the latest (the per-endpoint claim of webhooks/worker.ts, docs/design/notifications.md#attempts). */
async function dueNow(tx: Tx, id: string): Promise<void> {
  await tx.query(
    "UPDATE webhooks SET next_due_at = now() WHERE id = $1 AND (next_due_at IS NULL OR next_due_at > now())",
    [id],
  );
}

/** The agents' webhook endpoints and their delivery log. */
export class WebhookStore {
  /** `wake`: the delivery worker's, called after a commit that queued a delivery. */
  constructor(
    private readonly pool: pg.Pool,
    private readonly wake: () => void = () => {},
    /** APS_LIVEMODE: the `livemode` of the pings' bodies (docs/design/agents.md#sandbox). */
    private readonly livemode = true,
  ) {}

  /**
   * Queues a `webhook.ping` to one of the agent's enabled webhooks, sent at once through the
   * delivery worker like any delivery (signed, listed in its deliveries with status and
   * `lastError`), but tried once: a failure never retries nor disables the endpoint (docs/design/notifications.md#ping-redelivery-and-secret-rotation). Body `{type, timestamp, eventId, livemode, data: {webhookId, url}}`.
   * Errors: `not_found`, `invalid_state` (disabled).
   */
  async ping(agentId: string, id: string): Promise<QueuedDelivery> {
    return withTransaction(this.pool, async (tx) => {
      const hook = await lockEnabled(tx, agentId, id);
      await capOnDemand(tx, id);
      const out = { deliveryId: newId("msg_"), eventId: newId("evt_") };
      const body = JSON.stringify({
        type: PING_TYPE,
        timestamp: new Date().toISOString(),
        eventId: out.eventId,
        livemode: this.livemode,
        data: { webhookId: id, url: hook.url },
      });
      await tx.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at, single_attempt)
         VALUES ($1, $2, NULL, $3, $4, $5, now(), true)`,
        [out.deliveryId, id, PING_TYPE, out.eventId, body],
      );
      await dueNow(tx, id);
      afterCommit(tx, this.wake);
      return out;
    });
  }

  /**
   * Sends delivery `deliveryId` of one of the agent's enabled webhooks again, with the same
   * `webhook-id` and body (Standard Webhooks: receivers dedupe on the id), through the worker:
   * a finished one (succeeded or failed) becomes pending for one attempt (single_attempt: a
   * failure ends it failed, never disables); a pending one is made due now, its retries unchanged.
   * Its body is redacted first when what it is about has been hidden since (docs/design/notifications.md#redaction-of-hidden-content; under the feed lock, which moderation takes too). docs/design/notifications.md#ping-redelivery-and-secret-rotation.
   * Errors: `not_found` (webhook or delivery), `invalid_state` (disabled).
   */
  async redeliver(agentId: string, webhookId: string, deliveryId: string): Promise<QueuedDelivery> {
    return withTransaction(this.pool, async (tx) => {
      await lockEnabled(tx, agentId, webhookId);
      const r = await tx.query<{
        seq: string;
        status: string;
        event_id: string;
        body: string;
        feed_seq: string | null;
        post_id: string | null;
      }>(
        `SELECT d.seq::text, d.status, d.event_id, d.body, d.feed_seq::text, f.post_id
         FROM webhook_deliveries d LEFT JOIN feed_events f ON f.seq = d.feed_seq
         WHERE d.id = $1 AND d.webhook_id = $2`,
        [deliveryId, webhookId],
      );
      const d = r.rows[0];
      if (!d) throw new ApsError("not_found", `delivery ${deliveryId} of webhook ${webhookId} not found`);
      if (d.status !== "pending") await capOnDemand(tx, webhookId);
      let body = d.body;
      if (d.feed_seq !== null) {
        await tx.query("SELECT pg_advisory_xact_lock($1)", [FEED_LOCK]);
        const data = (JSON.parse(body) as { data?: Record<string, unknown> }).data ?? {};
        const targets = [d.post_id ?? data.postId, data.commentId].filter(
          (t): t is string => typeof t === "string" && t !== "",
        );
        if ((await hiddenAmong(tx, targets)).size > 0) body = redactWebhookBody(body);
      }
      await tx.query(
        `UPDATE webhook_deliveries SET body = $2, next_attempt_at = now(),
                single_attempt = CASE WHEN status = 'pending' THEN single_attempt ELSE true END,
                delivered_at = CASE WHEN status = 'pending' THEN delivered_at END,
                status = 'pending'
         WHERE seq = $1`,
        [d.seq, body],
      );
      await dueNow(tx, webhookId);
      afterCommit(tx, this.wake);
      return { deliveryId, eventId: d.event_id };
    });
  }

  /**
   * Gives one of the agent's enabled webhooks a new secret (newSecret(), returned once by the
   * caller); the one it replaces keeps signing too — a second `v1,` entry of `webhook-signature` —
   * until `overlapMs` from now (WEBHOOK_SECRET_OVERLAP_MS), so the receiver can switch without
   * losing a delivery. A second rotation within the window drops the oldest secret. Secrets are
   * stored as at creation and never logged. docs/design/notifications.md#ping-redelivery-and-secret-rotation. Errors: `not_found`,
   * `invalid_state` (disabled). Resolves when the previous secret stops signing (ISO-8601 UTC).
   */
  async rotateSecret(agentId: string, id: string, secret: string, overlapMs: number): Promise<string> {
    return withTransaction(this.pool, async (tx) => {
      await lockEnabled(tx, agentId, id);
      const r = await tx.query<{ until: string }>(
        `UPDATE webhooks SET previous_secret = secret, secret = $2,
                previous_secret_until = now() + ($3::bigint * interval '1 millisecond')
         WHERE id = $1
         RETURNING ${ISO("previous_secret_until")} AS until`,
        [id, secret, overlapMs],
      );
      return r.rows[0]!.until;
    });
  }

  /**
   * Registers a webhook for `agentId` (URL already checked by the SSRF guard); at most
   * MAX_WEBHOOKS_PER_AGENT, counted under a per-agent lock: a 6th → `invalid_state` (409). It starts
   * at the feed's head: it receives the events stored after the newest one committed at its
   * creation, never the feed's past (read that with `GET /v1/events`; docs/design/notifications.md#per-endpoint-feed-cursor).
   */
  async create(
    agentId: string,
    url: string,
    events: string[],
    secret: string,
    source: WebhookSource = { source: "", max: Infinity },
  ): Promise<WebhookRow> {
    return withTransaction(this.pool, async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('webhooks:' || $1))", [agentId]);
      const n = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks WHERE agent_id = $1", [agentId]);
      if (n.rows[0]!.n >= MAX_WEBHOOKS_PER_AGENT)
        throw new ApsError(
          "invalid_state",
          `an agent may have at most ${MAX_WEBHOOKS_PER_AGENT} webhooks; delete one first`,
        );
      if (source.source !== "") {
        // the source's lock after the agent's, in every transaction: no two wait on each other
        await tx.query("SELECT pg_advisory_xact_lock(hashtext('webhooks-source:' || $1))", [source.source]);
        const s = await tx.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM (SELECT 1 FROM webhooks WHERE source = $1 LIMIT $2) AS x",
          [source.source, Number.isFinite(source.max) ? source.max : 1_000_000],
        );
        if (s.rows[0]!.n >= source.max)
          throw new ApsError(
            "invalid_state",
            `the agents of your network hold ${source.max} webhooks already (WEBHOOKS_PER_SOURCE); delete one first`,
          );
      }
      const r = await tx.query<HookDbRow>(
        `INSERT INTO webhooks (id, agent_id, url, events, secret, feed_cursor, source)
         VALUES ($1, $2, $3, $4, $5, (SELECT coalesce(max(seq), 0) FROM feed_events), $6) RETURNING ${HOOK_COLS}`,
        [newId("wh_"), agentId, url, events, secret, source.source],
      );
      return toHook(r.rows[0]!);
    });
  }

  /** The agent's webhooks, oldest first (≤ 5: no paging needed). */
  async list(agentId: string): Promise<WebhookRow[]> {
    const r = await this.pool.query<HookDbRow>(
      `SELECT ${HOOK_COLS} FROM webhooks WHERE agent_id = $1 ORDER BY webhooks.created_at, webhooks.id`,
      [agentId],
    );
    return r.rows.map(toHook);
  }

  /** One of the agent's webhooks; `not_found` for another agent's or an unknown id. */
  async get(agentId: string, id: string): Promise<WebhookRow> {
    const r = await this.pool.query<HookDbRow>(`SELECT ${HOOK_COLS} FROM webhooks WHERE id = $1 AND agent_id = $2`, [
      id,
      agentId,
    ]);
    if (!r.rows[0]) throw new ApsError("not_found", `webhook ${id} not found`);
    return toHook(r.rows[0]);
  }

  /** Deletes one of the agent's webhooks and its queued deliveries; `not_found` when absent. */
  async delete(agentId: string, id: string): Promise<void> {
    const r = await this.pool.query("DELETE FROM webhooks WHERE id = $1 AND agent_id = $2", [id, agentId]);
    if (r.rowCount === 0) throw new ApsError("not_found", `webhook ${id} not found`);
  }

  /** Deliveries of one of the agent's webhooks, newest first, keyset after `cursor`. */
  async deliveries(agentId: string, webhookId: string, cursor: string, limit: number): Promise<DeliveryRow[]> {
    await this.get(agentId, webhookId);
    const before = cursor === "" ? null : parseSeqCursor(cursor).toString();
    const r = await this.pool.query<{
      seq: string;
      id: string;
      event_id: string;
      type: string;
      status: string;
      attempts: number;
      last_error: string;
      last_status_code: number;
      next_attempt_at: string;
      created_at: string;
      delivered_at: string;
    }>(
      `SELECT seq::text, id, event_id, type, status, attempts, coalesce(last_error, '') AS last_error,
              coalesce(last_status_code, 0) AS last_status_code,
              CASE WHEN status = 'pending' THEN ${ISO("next_attempt_at")} ELSE '' END AS next_attempt_at,
              ${ISO("created_at")} AS created_at, ${ISO("delivered_at")} AS delivered_at
       FROM webhook_deliveries WHERE webhook_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint)
       ORDER BY webhook_deliveries.seq DESC LIMIT $3`,
      [webhookId, before, limit],
    );
    return r.rows.map((x) => ({
      cursor: x.seq,
      id: x.id,
      eventId: x.event_id,
      type: x.type,
      status: x.status,
      attempts: x.attempts,
      lastError: x.last_error,
      lastStatusCode: x.last_status_code,
      nextAttemptAt: x.next_attempt_at,
      createdAt: x.created_at,
      deliveredAt: x.delivered_at,
    }));
  }
}
