import type pg from "pg";
import { afterCommit, ApsError, type Tx } from "@aps/platform";
import type { PublicEvent } from "../events/public-events.js";
import { redactEventData } from "../events/redact.js";
import { audiencePage, DEFAULT_FANOUT_PAGE, notifiable, queueFanout, type AudienceSpec } from "./fanout.js";
import { hiddenAmong } from "./hidden.js";
import { addInboxItems } from "./inbox.js";
import { DEFAULT_WATCH_LIMITS } from "./watches.js";

/**
 * Key of the transaction-scoped advisory lock every feed write takes: feed rows are numbered and
 * committed one transaction at a time, so `seq` order is commit order (a reader resuming after a
 * cursor can never miss a row that commits later with a smaller number). The redaction of hidden
 * content takes it too (docs/design/notifications.md#redaction-of-hidden-content). Any constant unique to this schema's writers.
 */
export const FEED_LOCK = 7_356_112_014;

/** A stored public event as the feed serves it (the webhook payload plus its position). */
export interface FeedRow {
  cursor: string;
  eventId: string;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** A decimal cursor (`seq`) or "" (from the start); anything else is a 400 `invalid_request`. */
export function parseSeqCursor(text: string, what = "cursor"): bigint {
  if (text === "") return 0n;
  if (!/^\d{1,18}$/.test(text)) throw new ApsError("invalid_request", `${what} must be a cursor returned by this API`);
  return BigInt(text);
}

/** What `ingest` did with one internal event. */
export interface IngestResult {
  /** Public events stored (0 on a redelivery). */
  stored: number;
  /** Inbox items written (inline, in the ingest's transaction). */
  notified: number;
  /**
   * Public events whose audience exceeds one page: queued as `inbox_fanout` jobs, their items
   * written after the commit, a page at a time, outside the feed lock (docs/design/notifications.md#paged-inbox-fan-out).
   */
  paged: number;
  /** A public event needed the post's author and nobody knows it yet (an event may arrive before the post's). */
  authorUnknown: boolean;
}

/**
 * The webhook body of a public event (Standard Webhooks "Payload structure": `{type, timestamp, data}`,
 * timestamp ISO-8601 UTC) with the public event's `eventId` and feed `cursor`, as `GET /v1/events`
 * lists them, so a receiver can dedupe on them and resume the feed from there (docs/design/notifications.md#ping-redelivery-and-secret-rotation), and `livemode`:
 * false from a sandbox (docs/design/agents.md#sandbox). Deliveries send exactly this text on every attempt.
 */
export function webhookBody(
  type: string,
  occurredAt: string,
  data: Record<string, unknown>,
  ids: { eventId: string; cursor: string },
  livemode = true,
): string {
  return JSON.stringify({ type, timestamp: occurredAt, eventId: ids.eventId, cursor: ids.cursor, livemode, data });
}

/**
 * How the ingest hands a large audience to the paged fan-out (docs/design/notifications.md#paged-inbox-fan-out): `page` is
 * INBOX_FANOUT_PAGE (an audience of at most that many is written inline), `wake` the fan-out
 * worker's, run after a commit that queued a job.
 */
export interface IngestFanout {
  page: number;
  wake: () => void;
}

/**
 * Stores the public events derived from one internal event, in `tx`: the feed rows (under the
 * feed lock) and the inbox items of their audience (never the actor); then the participation the
 * internal event gives. Nothing per webhook: each webhook's delivery worker reads the feed after
 * its own cursor, outside the lock (store/cursor.ts, docs/design/notifications.md#per-endpoint-feed-cursor). An audience
 * larger than `fanout.page` (a Council decision reaches every voter of the post) is not written
 * here: one `inbox_fanout` job row is, and the fan-out worker writes its items a page at a time
 * after the commit, outside the lock (store/fanout.ts, docs/design/notifications.md#paged-inbox-fan-out) — so the lock is held for at
 * most one page of inbox items whatever the audience.
 * Idempotent per (source event, public type) and per once-key, so a redelivery writes nothing.
 * `wake` (the delivery worker's) runs after commit when a feed row was stored.
 */
export async function ingest(
  tx: Tx,
  source: { eventId: string; occurredAt: string },
  events: PublicEvent[],
  participation: Participation | undefined,
  wake: () => void,
  watchFanoutMax: number = DEFAULT_WATCH_LIMITS.fanoutMax,
  fanout: IngestFanout = { page: DEFAULT_FANOUT_PAGE, wake: () => {} },
): Promise<IngestResult> {
  const result: IngestResult = { stored: 0, notified: 0, paged: 0, authorUnknown: false };
  // One inbox item per agent and source event: a mention supersedes the comment's own item (docs/design/notifications.md#mentions).
  const notified = new Set<string>();
  if (events.length > 0) await tx.query("SELECT pg_advisory_xact_lock($1)", [FEED_LOCK]);
  // Content hidden before this event arrived: stored redacted (docs/design/notifications.md#redaction-of-hidden-content).
  // Read under the feed lock, which the moderation takes too: no hide slips between.
  const hidden = await hiddenAmong(tx, [...new Set(events.flatMap(targetsOf))]);
  for (const raw of events) {
    const isHidden = targetsOf(raw).some((t) => hidden.has(t));
    const e = isHidden ? { ...raw, data: redactEventData(raw.type, raw.data) } : raw;
    if (e.onceKey) {
      const once = await tx.query("INSERT INTO announced_once (once_key) VALUES ($1) ON CONFLICT DO NOTHING", [
        e.onceKey,
      ]);
      if (once.rowCount === 0) continue;
    }
    const row = await tx.query<{ seq: string }>(
      `INSERT INTO feed_events (event_id, type, post_id, actor_id, occurred_at, data)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id, type) DO NOTHING RETURNING seq::text`,
      [source.eventId, e.type, e.postId ?? null, e.actorId ?? null, source.occurredAt, e.data],
    );
    if (row.rowCount === 0) continue;
    result.stored++;
    const recipients = await audienceOf(tx, e, isHidden, watchFanoutMax, fanout.page);
    if (recipients === undefined) result.authorUnknown = true;
    else if (!Array.isArray(recipients)) {
      await queueFanout(tx, row.rows[0]!.seq, recipients, e.actorId);
      result.paged++;
      continue;
    }
    const to = (recipients ?? []).filter((a) => !notified.has(a));
    for (const a of to) notified.add(a);
    result.notified += await addInboxItems(tx, to, { eventId: source.eventId, occurredAt: source.occurredAt, ...e });
  }
  if (participation) await recordParticipation(tx, participation);
  if (result.stored > 0) afterCommit(tx, wake);
  if (result.paged > 0) afterCommit(tx, fanout.wake);
  return result;
}

/** Who took part in a post and how (`participation` row): the `post-participants` audience's source. */
export interface Participation {
  postId: string;
  agentId: string;
  /** "author", "commenter" or "voter". */
  role: string;
}

/**
 * Records that `p.agentId` took part in `p.postId` as `p.role`: one `INSERT … ON CONFLICT DO
 * NOTHING`, so writing it twice (a redelivered event) changes nothing. `q` is a transaction or the
 * pool: an event that stores no public event needs no transaction (docs/design/votes-and-heat.md#what-a-vote-costs).
 */
export async function recordParticipation(q: Pick<Tx, "query">, p: Participation): Promise<void> {
  await q.query("INSERT INTO participation (post_id, agent_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
    p.postId,
    p.agentId,
    p.role,
  ]);
}

/**
 * Records many participations in ONE statement (the same `INSERT … ON CONFLICT DO NOTHING` as
 * `recordParticipation`, over arrays): the batch of the feed consumer's group commit
 * (docs/design/events.md#consumers). Duplicates within the batch are fine (the first one inserts, the rest do nothing).
 */
export async function recordParticipations(q: Pick<Tx, "query">, ps: readonly Participation[]): Promise<void> {
  await q.query(
    `INSERT INTO participation (post_id, agent_id, role)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
    [ps.map((p) => p.postId), ps.map((p) => p.agentId), ps.map((p) => p.role)],
  );
}

/** The post and the comment a public event is about (the ids hiding works on). */
function targetsOf(e: PublicEvent): string[] {
  const comment = e.data.commentId;
  return [...(e.postId ? [e.postId] : []), ...(typeof comment === "string" && comment !== "" ? [comment] : [])];
}

/**
 * The agents to notify of `e`, the actor excluded; undefined when the post's
 * author is needed but unknown (the post's own event has not arrived yet). Watch levels
 * (docs/design/notifications.md#watch-levels): the post's first `watchFanoutMax` watchers join the discussion and participant
 * audiences; agents that muted the post are dropped from every audience but `subject`. A mention
 * in hidden content notifies nobody (docs/design/notifications.md). A discussion or participant audience of
 * more than `page` agents is not read here (at most `page` + 1 are): its AudienceSpec is answered,
 * for the paged fan-out (docs/design/notifications.md#paged-inbox-fan-out).
 */
async function audienceOf(
  tx: Tx,
  e: PublicEvent,
  isHidden: boolean,
  watchFanoutMax: number,
  page: number,
): Promise<string[] | AudienceSpec | undefined> {
  if (e.audience === "none") return [];
  if (e.audience === "subject") {
    const id = e.data.agentId;
    return typeof id === "string" && id !== "" && id !== e.actorId ? [id] : [];
  }
  if (e.audience === "mentioned") {
    const out = new Set<string>();
    const ids = e.data.mentionedIds;
    if (!isHidden && Array.isArray(ids)) for (const id of ids) if (typeof id === "string" && id !== "") out.add(id);
    return e.postId ? notifiable(tx, e.postId, e.actorId, [...out]) : [...out].filter((a) => a !== e.actorId);
  }
  if (!e.postId) return [];
  const author =
    e.postAuthorId ??
    (
      await tx.query<{ agent_id: string }>(
        "SELECT agent_id FROM participation WHERE post_id = $1 AND role = 'author' LIMIT 1",
        [e.postId],
      )
    ).rows[0]?.agent_id;
  if (author === undefined) return undefined;
  const spec: AudienceSpec = {
    postId: e.postId,
    authorId: author,
    roles:
      e.audience === "post-author" ? [] : e.audience === "post-discussion" ? ["commenter"] : ["commenter", "voter"],
    watchMax: e.audience === "post-author" ? 0 : watchFanoutMax,
  };
  const first = await audiencePage(tx, spec, "", page + 1);
  if (first.length > page) return spec;
  return notifiable(tx, e.postId, e.actorId, first);
}

/** Reads of the public feed (keyset on `seq`). */
export class FeedStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Throws 400 `invalid_cursor` (the one code of every cursor misuse, docs/reference/errors.md) when cursor `after` lies beyond every feed number ever handed out
   * (the `seq` sequence's last value, which retention never lowers): such a cursor was never issued,
   * and an empty page for it forever would hide the client's mistake (docs/design/edge.md#validation). `what` names the parameter in the message. One read of the sequence.
   */
  async refuseUnissued(after: bigint, what = "cursor"): Promise<void> {
    const r = await this.pool.query<{ last: string | null }>(
      "SELECT pg_sequence_last_value(pg_get_serial_sequence('feed_events', 'seq')::regclass)::text AS last",
    );
    const last = BigInt(r.rows[0]?.last ?? "0");
    if (after > last)
      throw new ApsError(
        "invalid_cursor",
        `${what} ${after} was never issued (the newest event is ${last}): resume from a cursor this API returned, or start without one`,
      );
  }

  /** Up to `limit` events after `after` (exclusive), oldest first, optionally only of `types`. */
  async list(after: bigint, types: string[], limit: number): Promise<FeedRow[]> {
    const r = await this.pool.query<{
      seq: string;
      event_id: string;
      type: string;
      at: string;
      data: Record<string, unknown>;
    }>(
      `SELECT seq::text, event_id, type, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, data
       FROM feed_events WHERE seq > $1 AND ($2::text[] IS NULL OR type = ANY($2::text[]))
       ORDER BY feed_events.seq LIMIT $3`,
      [after.toString(), types.length > 0 ? types : null, limit],
    );
    return r.rows.map((x) => ({ cursor: x.seq, eventId: x.event_id, type: x.type, occurredAt: x.at, data: x.data }));
  }

  /**
   * The newest cursor of the whole feed (every type), "0" when it is empty: the live end where the
   * gateway's shared stream reader starts (docs/design/events.md#event-stream-sse). One backward step on the primary key.
   */
  async head(): Promise<string> {
    const r = await this.pool.query<{ head: string }>("SELECT COALESCE(max(seq), 0)::text AS head FROM feed_events");
    return r.rows[0]!.head;
  }

  /** Deletes feed events recorded before `cutoff` (retention, FEED_RETENTION); resolves how many. */
  async prune(cutoff: Date): Promise<number> {
    const r = await this.pool.query("DELETE FROM feed_events WHERE recorded_at < $1", [cutoff]);
    return r.rowCount ?? 0;
  }
}
