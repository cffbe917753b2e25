import type { Tx } from "@aps/platform";
import { redactEventData, redactWebhookBody } from "../events/redact.js";

/**
 * The moderation state the feed keeps (docs/design/notifications.md#redaction-of-hidden-content):
 * table `hidden_content`, one row per post or comment the forum hid or showed again.
 */

/**
 * Key of the advisory lock between the materialisation of webhook deliveries from the feed (shared:
 * each worker transaction that copies feed rows into deliveries, store/cursor.ts, docs/design/notifications.md#per-endpoint-feed-cursor)
 * and the redaction of hidden content (exclusive, `applyModeration`): a body copied from a feed row
 * before a hide commits is then always among the pending deliveries that hide redacts. The ingest
 * never takes it. Any constant unique to this schema's writers.
 */
export const MATERIALISE_LOCK = 7_356_112_192;

/** One `forum.post_moderated` event: `commentId` "" when the post itself was moderated. */
export interface Moderation {
  postId: string;
  commentId: string;
  hidden: boolean;
  /** ISO-8601 UTC instant of the moderation (events apply in this order, whatever their arrival order). */
  occurredAt: string;
}

/** What `applyModeration` changed. */
export interface ModerationResult {
  /** Feed rows redacted now. */
  feedRows: number;
  /** Pending deliveries whose body was redacted now. */
  deliveries: number;
}

/**
 * Records moderation `m` in `tx` (the caller holds the feed lock, so no feed row about the target
 * commits between this and the redaction); when it hides its target, redacts the stored feed rows
 * about it (a post: every row of the post; a comment: the rows naming the comment) and the pending
 * deliveries of those rows. An event older than the state recorded for its target changes nothing.
 * Rows about the target are found through `feed_events_post` (one post's rows), so the cost is the
 * post's events, never the feed's. Takes MATERIALISE_LOCK first: no worker is copying feed rows
 * into deliveries while it redacts (docs/design/notifications.md#per-endpoint-feed-cursor).
 */
export async function applyModeration(tx: Tx, m: Moderation): Promise<ModerationResult> {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [MATERIALISE_LOCK]);
  const target = m.commentId || m.postId;
  const applied = await tx.query<{ hidden: boolean }>(
    `INSERT INTO hidden_content (target_id, post_id, hidden, changed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (target_id) DO UPDATE SET hidden = EXCLUDED.hidden, changed_at = EXCLUDED.changed_at
       WHERE hidden_content.changed_at <= EXCLUDED.changed_at
     RETURNING hidden`,
    [target, m.postId, m.hidden, m.occurredAt],
  );
  if (!applied.rows[0]?.hidden) return { feedRows: 0, deliveries: 0 };
  const rows = await tx.query<{ seq: string; type: string; data: Record<string, unknown> }>(
    `SELECT seq::text, type, data FROM feed_events
     WHERE post_id = $1 AND ($2 = '' OR data->>'commentId' = $2) AND (data->>'hidden') IS DISTINCT FROM 'true'
     ORDER BY feed_events.seq FOR UPDATE`,
    [m.postId, m.commentId],
  );
  if (rows.rowCount === 0) return { feedRows: 0, deliveries: 0 };
  await tx.query(
    `UPDATE feed_events f SET data = u.data FROM unnest($1::bigint[], $2::jsonb[]) AS u(seq, data) WHERE f.seq = u.seq`,
    [rows.rows.map((r) => r.seq), rows.rows.map((r) => JSON.stringify(redactEventData(r.type, r.data)))],
  );
  const pending = await tx.query<{ seq: string; body: string }>(
    `SELECT seq::text, body FROM webhook_deliveries WHERE feed_seq = ANY($1::bigint[]) AND status = 'pending'
     ORDER BY webhook_deliveries.seq FOR UPDATE`,
    [rows.rows.map((r) => r.seq)],
  );
  if (pending.rowCount)
    await tx.query(
      `UPDATE webhook_deliveries d SET body = u.body FROM unnest($1::bigint[], $2::text[]) AS u(seq, body)
       WHERE d.seq = u.seq`,
      [pending.rows.map((r) => r.seq), pending.rows.map((r) => redactWebhookBody(r.body))],
    );
  return { feedRows: rows.rowCount ?? 0, deliveries: pending.rowCount ?? 0 };
}

/**
 * The ids among `targetIds` (posts and comments) that are hidden now, in `tx`; the feed redacts
 * the events about them before storing (an event may arrive after its target's hiding).
 */
export async function hiddenAmong(tx: Tx, targetIds: string[]): Promise<Set<string>> {
  if (targetIds.length === 0) return new Set();
  const r = await tx.query<{ target_id: string }>(
    "SELECT target_id FROM hidden_content WHERE target_id = ANY($1::text[]) AND hidden",
    [targetIds],
  );
  return new Set(r.rows.map((x) => x.target_id));
}
