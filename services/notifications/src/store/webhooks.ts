import type pg from "pg";
import { ApsError, newId, withTransaction } from "@aps/platform";
import { parseSeqCursor } from "./feed.js";

/** At most this many webhooks per agent (issue #14). */
export const MAX_WEBHOOKS_PER_AGENT = 5;

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

/** The agents' webhook endpoints and their delivery log. */
export class WebhookStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Registers a webhook for `agentId` (URL already checked by the SSRF guard); at most
   * MAX_WEBHOOKS_PER_AGENT, counted under a per-agent lock: a 6th → `invalid_state` (409).
   */
  async create(agentId: string, url: string, events: string[], secret: string): Promise<WebhookRow> {
    return withTransaction(this.pool, async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('webhooks:' || $1))", [agentId]);
      const n = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks WHERE agent_id = $1", [agentId]);
      if (n.rows[0]!.n >= MAX_WEBHOOKS_PER_AGENT)
        throw new ApsError(
          "invalid_state",
          `an agent may have at most ${MAX_WEBHOOKS_PER_AGENT} webhooks; delete one first`,
        );
      const r = await tx.query<HookDbRow>(
        `INSERT INTO webhooks (id, agent_id, url, events, secret) VALUES ($1, $2, $3, $4, $5) RETURNING ${HOOK_COLS}`,
        [newId("wh_"), agentId, url, events, secret],
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
