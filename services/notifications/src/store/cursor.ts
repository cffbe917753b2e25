import { newId, type Tx } from "@aps/platform";
import { webhookBody } from "./feed.js";
import { MATERIALISE_LOCK } from "./hidden.js";

/**
 * Each webhook's cursor over the public feed (docs/design/notifications.md#per-endpoint-feed-cursor). The ingest writes one feed row per public event and nothing per webhook; the
 * delivery worker turns an endpoint's next subscribed feed events into delivery rows here, lazily,
 * outside the feed lock, while it holds the endpoint's claim (webhooks/worker.ts, docs/design/notifications.md#attempts).
 *
 * Why reading `seq > feed_cursor` never misses an event: feed rows are numbered and committed one
 * transaction at a time under FEED_LOCK (store/feed.ts), so once the row numbered `head` is
 * visible, every row numbered below it is committed (or rolled back for good). The window only
 * ever reads up to a `head` read before it.
 */

/** At most this many pending deliveries per endpoint, unless a worker is given another `pendingMax` (docs/design/notifications.md#per-endpoint-feed-cursor). */
export const DEFAULT_PENDING_MAX = 100;

/**
 * At most this many feed numbers are scanned per materialisation: an endpoint subscribed to a rare
 * type advances over the feed in steps of this size, so no claim reads an unbounded range.
 */
export const SCAN_MAX = 1_000;

/**
 * The feed's head: the newest `seq` committed (0 when the feed is empty). One backward step on
 * the primary key. Endpoints whose `feed_cursor` is below it have events to consider.
 */
export async function feedHead(tx: Pick<Tx, "query">): Promise<bigint> {
  const r = await tx.query<{ head: string }>("SELECT coalesce(max(seq), 0)::text AS head FROM feed_events");
  return BigInt(r.rows[0]!.head);
}

/** The endpoint fields a materialisation reads (its row locked by the caller). */
export interface CursorHook {
  id: string;
  /** Subscribed public event types, or `*`. */
  events: string[];
  /** Decimal feed `seq` up to which events are queued or skipped. */
  feed_cursor: string;
}

/**
 * Queues the next subscribed feed events after the cursor of each endpoint of `hooks`, up to
 * `head`, as pending deliveries due now (each with its own new `webhook-id`; body `webhookBody` of
 * the feed row as stored, so redacted if it is), keeping at most `pendingMax` pending deliveries
 * per endpoint; moves each cursor past what it queued and past the events the endpoint does not
 * subscribe to (at most SCAN_MAX feed numbers per call and endpoint), and records whether each
 * window is now full (`window_full`, cleared when one of its attempts is recorded). The caller
 * holds the endpoints' row locks (the claim) in `tx` and no delivery row lock yet. A fixed number
 * of statements whatever the number of endpoints; each feed row is read and serialised once.
 * `livemode` goes into every body (docs/design/agents.md#sandbox). Resolves how many deliveries it queued.
 */
export async function materialise(
  tx: Tx,
  hooks: CursorHook[],
  head: bigint,
  pendingMax: number,
  livemode = true,
): Promise<number> {
  const behind = hooks.filter((h) => BigInt(h.feed_cursor) < head);
  if (behind.length === 0) return 0;
  const counts = await tx.query<{ webhook_id: string; n: number }>(
    `SELECT webhook_id, count(*)::int AS n FROM webhook_deliveries
     WHERE webhook_id = ANY($1::text[]) AND status = 'pending' GROUP BY webhook_id`,
    [behind.map((h) => h.id)],
  );
  const pending = new Map(counts.rows.map((r) => [r.webhook_id, r.n]));
  const plan = behind.map((h) => {
    const cursor = BigInt(h.feed_cursor);
    const upto = head < cursor + BigInt(SCAN_MAX) ? head : cursor + BigInt(SCAN_MAX);
    return { id: h.id, cursor, upto, room: Math.max(0, pendingMax - (pending.get(h.id) ?? 0)) };
  });
  const open = plan.filter((p) => p.room > 0);
  let picked: { webhook_id: string; seq: string }[] = [];
  if (open.length > 0) {
    await tx.query("SELECT pg_advisory_xact_lock_shared($1)", [MATERIALISE_LOCK]);
    picked = (
      await tx.query<{ webhook_id: string; seq: string }>(
        `SELECT p.id AS webhook_id, f.seq::text
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[]) AS p(id, after, upto, room)
         JOIN webhooks w ON w.id = p.id
         CROSS JOIN LATERAL (
           SELECT seq FROM feed_events
           WHERE seq > p.after AND seq <= p.upto AND ('*' = ANY(w.events) OR type = ANY(w.events))
           ORDER BY feed_events.seq LIMIT p.room) f`,
        [
          open.map((p) => p.id),
          open.map((p) => p.cursor.toString()),
          open.map((p) => p.upto.toString()),
          open.map((p) => p.room),
        ],
      )
    ).rows;
  }
  if (picked.length > 0) {
    const feed = await tx.query<{
      seq: string;
      event_id: string;
      type: string;
      at: string;
      data: Record<string, unknown>;
    }>(
      `SELECT seq::text, event_id, type, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, data
       FROM feed_events WHERE seq = ANY($1::bigint[])`,
      [[...new Set(picked.map((x) => x.seq))]],
    );
    const bySeq = new Map(
      feed.rows.map((x) => [
        x.seq,
        { ...x, body: webhookBody(x.type, x.at, x.data, { eventId: x.event_id, cursor: x.seq }, livemode) },
      ]),
    );
    await tx.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at)
       SELECT d.id, d.webhook_id, d.feed_seq, d.type, d.event_id, d.body, now()
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])
         AS d(id, webhook_id, feed_seq, type, event_id, body)
       ON CONFLICT DO NOTHING`,
      [
        picked.map(() => newId("msg_")),
        picked.map((x) => x.webhook_id),
        picked.map((x) => x.seq),
        picked.map((x) => bySeq.get(x.seq)!.type),
        picked.map((x) => bySeq.get(x.seq)!.event_id),
        picked.map((x) => bySeq.get(x.seq)!.body),
      ],
    );
  }
  const queued = new Map<string, { n: number; last: string }>();
  for (const x of picked) queued.set(x.webhook_id, { n: (queued.get(x.webhook_id)?.n ?? 0) + 1, last: x.seq });
  const next = plan.map((p) => {
    const q = queued.get(p.id);
    const full = p.room === 0 || q?.n === p.room;
    // a full window stops at its last queued event; otherwise everything up to `upto` was considered
    return { id: p.id, cursor: p.room === 0 ? p.cursor.toString() : full ? q!.last : p.upto.toString(), full };
  });
  await tx.query(
    `UPDATE webhooks w SET feed_cursor = u.cursor, window_full = u.is_full
     FROM unnest($1::text[], $2::bigint[], $3::boolean[]) AS u(id, cursor, is_full) WHERE w.id = u.id`,
    [next.map((x) => x.id), next.map((x) => x.cursor), next.map((x) => x.full)],
  );
  return picked.length;
}
