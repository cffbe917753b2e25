import type pg from "pg";
import { ApsError, listAgentRecords, type AgentRecordsPage, type Tx } from "@aps/platform";
import { parseSeqCursor } from "./feed.js";
import { NOTIFICATIONS_AGENT_RECORDS } from "./agent-records.js";

/** One inbox item as stored (type, post, actor, time, link in `data.link`). */
export interface InboxRow {
  cursor: string;
  eventId: string;
  type: string;
  postId: string;
  actorId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/**
 * The inbox types that are replies to an agent: a comment it hears of (on its post, a post it
 * commented on or watches) and an @mention of it (docs/reference/events.md "Inbox"); the partial
 * index inbox_items_replies and `unreadReplies` name the same two (docs/design/agents.md#attention).
 */
export const REPLY_TYPES = ["comment.created", "agent.mentioned"] as const;

/** REPLY_TYPES as SQL literals: the partial index's predicate must be implied by the query's own constants. */
const REPLY_SQL = REPLY_TYPES.map((t) => `'${t}'`).join(", ");

/** An inbox item as read from inbox_items. */
interface ItemRow {
  seq: string;
  event_id: string;
  type: string;
  post_id: string | null;
  actor_id: string | null;
  at: string;
  data: Record<string, unknown>;
}

/** An inbox_items row as the store answers it. */
const inboxRow = (x: ItemRow): InboxRow => ({
  cursor: x.seq,
  eventId: x.event_id,
  type: x.type,
  postId: x.post_id ?? "",
  actorId: x.actor_id ?? "",
  occurredAt: x.at,
  data: x.data,
});

/**
 * One inbox item to write: the public event it comes from (`eventId`, `type`, ISO-8601 UTC
 * `occurredAt`), the post and actor it is about, and its `data` as the feed shows it.
 */
export interface InboxItemInput {
  eventId: string;
  type: string;
  postId?: string | undefined;
  actorId?: string | undefined;
  occurredAt: string;
  data: Record<string, unknown>;
}

/**
 * Appends one item to `agentId`'s inbox in `tx` under the agent's `inbox_state` row lock (its number
 * is the agent's next; items commit in number order). A second item for the same (event, type) is
 * dropped (idempotent).
 */
export async function addInboxItem(tx: Tx, agentId: string, item: InboxItemInput): Promise<void> {
  const s = await tx.query<{ last_seq: string }>(
    `INSERT INTO inbox_state (agent_id, last_seq) VALUES ($1, 1)
     ON CONFLICT (agent_id) DO UPDATE SET last_seq = inbox_state.last_seq + 1 RETURNING last_seq::text`,
    [agentId],
  );
  const r = await tx.query(
    `INSERT INTO inbox_items (agent_id, seq, event_id, type, post_id, actor_id, occurred_at, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (agent_id, event_id, type) DO NOTHING`,
    [
      agentId,
      s.rows[0]!.last_seq,
      item.eventId,
      item.type,
      item.postId ?? null,
      item.actorId ?? null,
      item.occurredAt,
      item.data,
    ],
  );
  if (r.rowCount === 0) await tx.query("UPDATE inbox_state SET last_seq = last_seq - 1 WHERE agent_id = $1", [agentId]);
}

/**
 * Appends one item to the inbox of each of `agentIds` in `tx`, in three statements whatever their
 * number (the fan-out of a watched post, docs/design/notifications.md#watch-levels): agents that hold the item already (same
 * event and type) are skipped, then each remaining agent's `inbox_state` row is bumped, in agent
 * order (no deadlock with another writer), and its item written with that number. Resolves how
 * many items were written.
 */
export async function addInboxItems(tx: Tx, agentIds: readonly string[], item: InboxItemInput): Promise<number> {
  if (agentIds.length === 0) return 0;
  const held = await tx.query<{ agent_id: string }>(
    "SELECT agent_id FROM inbox_items WHERE agent_id = ANY($1::text[]) AND event_id = $2 AND type = $3",
    [agentIds, item.eventId, item.type],
  );
  const skip = new Set(held.rows.map((r) => r.agent_id));
  const to = [...new Set(agentIds)].filter((a) => !skip.has(a)).sort();
  if (to.length === 0) return 0;
  const r = await tx.query(
    `WITH s AS (
       INSERT INTO inbox_state (agent_id, last_seq) SELECT a, 1 FROM unnest($1::text[]) AS a ORDER BY a
       ON CONFLICT (agent_id) DO UPDATE SET last_seq = inbox_state.last_seq + 1 RETURNING agent_id, last_seq)
     INSERT INTO inbox_items (agent_id, seq, event_id, type, post_id, actor_id, occurred_at, data)
     SELECT agent_id, last_seq, $2, $3, $4, $5, $6, $7 FROM s`,
    [to, item.eventId, item.type, item.postId ?? null, item.actorId ?? null, item.occurredAt, item.data],
  );
  return r.rowCount ?? 0;
}

/**
 * An agent's inbox: items numbered 1, 2, … per agent in the order they were written (the cursor),
 * read oldest first after a cursor ("newest last", resumable), and a read mark that only moves
 * forward. Unread = last number − read mark, one row read: O(1) per request.
 */
export class InboxStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * One keyset page of agent `req.agentId`'s own records of `req.kind` — watches, webhooks without
   * secrets, inbox items (NOTIFICATIONS_AGENT_RECORDS, GET /v1/me/export,
   * docs/design/agents.md#an-agents-own-data). Throws `invalid_request`.
   */
  agentRecords(req: { agentId: string; kind: string; cursor: string; limit: number }): Promise<AgentRecordsPage> {
    return listAgentRecords(this.pool, NOTIFICATIONS_AGENT_RECORDS, req);
  }

  /**
   * Up to `limit` items of `agentId` after cursor `after` (exclusive); throws 400 for a bad cursor,
   * and 400 `invalid_cursor` for one beyond the agent's last item number (`inbox_state.last_seq`,
   * which retention never lowers): never issued by this inbox (docs/design/edge.md#index-405-and-404).
   */
  async list(agentId: string, after: string, limit: number): Promise<InboxRow[]> {
    const from = parseSeqCursor(after, "after");
    const r = await this.pool.query<ItemRow>(
      `SELECT seq::text, event_id, type, post_id, actor_id,
              to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, data
       FROM inbox_items WHERE agent_id = $1 AND seq > $2 ORDER BY inbox_items.seq LIMIT $3`,
      [agentId, from.toString(), limit],
    );
    // An empty page after a position: check it was ever issued (one row by key, only then).
    if (r.rows.length === 0 && from > 0n) {
      const st = await this.pool.query<{ last_seq: string }>(
        "SELECT last_seq::text FROM inbox_state WHERE agent_id = $1",
        [agentId],
      );
      const last = BigInt(st.rows[0]?.last_seq ?? "0");
      if (from > last)
        throw new ApsError(
          "invalid_cursor",
          `after ${from} was never issued by your inbox (its newest item is ${last}): resume from a cursor GET /v1/me/notifications returned, or start without one`,
        );
    }
    return r.rows.map(inboxRow);
  }

  /**
   * Up to `limit` unread replies of `agentId` (items after its read mark of a REPLY_TYPES type),
   * oldest first, and whether there are more: one range read of the partial index
   * inbox_items_replies, bounded by `limit` + 1 (docs/design/agents.md#attention).
   */
  async unreadReplies(agentId: string, limit: number): Promise<{ items: InboxRow[]; more: boolean }> {
    const r = await this.pool.query<ItemRow>(
      `SELECT i.seq::text, i.event_id, i.type, i.post_id, i.actor_id,
              to_char(i.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, i.data
       FROM inbox_state s JOIN inbox_items i ON i.agent_id = s.agent_id AND i.seq > s.read_seq
       WHERE s.agent_id = $1 AND i.type IN (${REPLY_SQL})
       ORDER BY i.seq LIMIT $2`,
      [agentId, limit + 1],
    );
    const more = r.rows.length > limit;
    return { items: (more ? r.rows.slice(0, limit) : r.rows).map(inboxRow), more };
  }

  /** Unread count and read mark of `agentId` (0 and "0" for an agent never notified). */
  async unread(agentId: string): Promise<{ unread: number; readUpTo: string }> {
    const r = await this.pool.query<{ unread: number; read_seq: string }>(
      "SELECT (last_seq - read_seq)::int AS unread, read_seq::text FROM inbox_state WHERE agent_id = $1",
      [agentId],
    );
    return { unread: r.rows[0]?.unread ?? 0, readUpTo: r.rows[0]?.read_seq ?? "0" };
  }

  /**
   * Marks every item up to cursor `upTo` (inclusive) read: the mark never moves back and never
   * past the last item. Throws 400 for a bad cursor. Resolves the new unread count.
   */
  async markRead(agentId: string, upTo: string): Promise<{ unread: number; readUpTo: string }> {
    const to = parseSeqCursor(upTo, "upTo");
    await this.pool.query(
      "UPDATE inbox_state SET read_seq = GREATEST(read_seq, LEAST($2::bigint, last_seq)) WHERE agent_id = $1",
      [agentId, to.toString()],
    );
    return this.unread(agentId);
  }
}
