import { WakeLoop } from "../wake-loop.js";
import type pg from "pg";
import { registerWorkQueue, withTransaction, type Logger, type Tx, type WorkQueueSource } from "@aps/platform";
import { addInboxItems } from "./inbox.js";
import { mutedAmong, WATCHER_ORDER } from "./watches.js";

/**
 * Recipients per page of a paged inbox fan-out (INBOX_FANOUT_PAGE, docs/design/notifications.md#paged-inbox-fan-out): an audience of
 * at most this many is written inline by the ingest, under the feed lock as before; a larger one
 * is queued as an `inbox_fanout` job and written this many recipients per transaction, outside
 * the lock.
 */
export const DEFAULT_FANOUT_PAGE = 500;

/**
 * The audience of a post's event as a keyset-pageable set (docs/design/notifications.md#watch-levels): the
 * post's author, its participants in `roles` (`commenter`, `voter`) and its first `watchMax`
 * watchers by standing (WATCHER_ORDER) — before the actor and the agents that muted the post are left out.
 */
export interface AudienceSpec {
  postId: string;
  authorId: string;
  /** Participation roles reached besides the author's (none for `post-author`). */
  roles: string[];
  /** Watchers reached (WATCH_FANOUT_MAX); 0 = none. */
  watchMax: number;
}

/**
 * Up to `limit` distinct agents of `a` after agent id `after` ("" = from the start), in agent_id
 * order (the database's collation, the one of the indexes read): one range read of the
 * `participation` primary key per role and one of `post_watches_ranked`, each at most `limit`
 * rows (`watchMax` for the watchers), so a page costs the same at any audience size.
 */
export async function audiencePage(tx: Tx, a: AudienceSpec, after: string, limit: number): Promise<string[]> {
  const r = await tx.query<{ agent_id: string }>(
    `SELECT DISTINCT agent_id FROM (
       SELECT p.agent_id FROM unnest($3::text[]) AS r(role) CROSS JOIN LATERAL (
         SELECT agent_id FROM participation WHERE post_id = $1 AND role = r.role AND agent_id > $4
         ORDER BY agent_id LIMIT $5) p
       UNION ALL
       SELECT w.agent_id FROM (
         SELECT agent_id FROM post_watches WHERE post_id = $1 AND level = 'watching'
         ORDER BY ${WATCHER_ORDER} LIMIT $6) w
       WHERE w.agent_id > $4
       UNION ALL
       SELECT $2::text WHERE $2::text > $4
     ) a ORDER BY agent_id LIMIT $5`,
    [a.postId, a.authorId, ["author", ...a.roles], after, limit, a.watchMax],
  );
  return r.rows.map((x) => x.agent_id);
}

/**
 * Those of `candidates` to notify of a post's event: not the actor, not an agent that muted the
 * post (docs/design/notifications.md#watch-levels). One primary-key probe per candidate.
 */
export async function notifiable(
  tx: Tx,
  postId: string,
  actorId: string | undefined | null,
  candidates: readonly string[],
): Promise<string[]> {
  const out = actorId ? candidates.filter((c) => c !== actorId) : [...candidates];
  const muted = await mutedAmong(tx, postId, out);
  return muted.size === 0 ? out : out.filter((c) => !muted.has(c));
}

/**
 * Queues the paged fan-out of feed row `feedSeq` to audience `a` (the ingest, in its transaction,
 * when the audience exceeds a page: docs/design/notifications.md#paged-inbox-fan-out). Idempotent per feed row.
 */
export async function queueFanout(
  tx: Tx,
  feedSeq: string,
  a: AudienceSpec,
  actorId: string | undefined,
): Promise<void> {
  await tx.query(
    `INSERT INTO inbox_fanout (feed_seq, post_id, author_id, roles, watch_max, actor_id)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (feed_seq) DO NOTHING`,
    [feedSeq, a.postId, a.authorId, a.roles, a.watchMax, actorId ?? null],
  );
}

/** What one page of a fan-out did. */
export interface FanoutPage {
  /** The feed row the job notifies of. */
  feedSeq: string;
  /** Recipients read (before the actor, muted agents and those already notified are left out). */
  read: number;
  /** Inbox items written. */
  written: number;
  /** The job is finished (its row deleted). */
  done: boolean;
}

/** A queued fan-out as claimed, with the feed row it notifies of. */
interface Job {
  feed_seq: string;
  post_id: string;
  author_id: string;
  roles: string[];
  watch_max: number;
  actor_id: string | null;
  after_agent: string;
  pages: number;
  event_id: string | null;
  type: string | null;
  occurred_at: Date | null;
  data: Record<string, unknown> | null;
}

/**
 * Test seam: called inside a page's transaction after its items are written and before its
 * cursor moves (a throw there is a crash mid-page: the page rolls back).
 */
export type PageHook = (p: { feedSeq: string; page: number; written: number }) => Promise<void> | void;

/**
 * Writes the next page of one queued fan-out, in one transaction (docs/design/notifications.md#paged-inbox-fan-out): takes the oldest
 * job no other transaction holds (`FOR UPDATE SKIP LOCKED`: the row lock is the lease, so replicas
 * share the jobs and a crashed one's page rolls back and is redone by the next taker), reads up to
 * `pageSize` recipients after its cursor (`audiencePage`), leaves out the actor, muted agents and
 * every agent that already holds an item of the same source event (idempotent per agent and
 * event: a redone page writes nothing twice; a mention's item supersedes the comment's,
 * docs/design/notifications.md#mentions), writes the rest (`addInboxItems`, agent order) with the feed row's type and
 * data, and moves the cursor past the page — or deletes the job after its last page, or when its
 * feed row is gone (retention). Never takes FEED_LOCK. Resolves undefined when no job is free.
 */
export async function runFanoutPage(pool: pg.Pool, pageSize: number, hook?: PageHook): Promise<FanoutPage | undefined> {
  return withTransaction(pool, async (tx) => {
    const r = await tx.query<Job>(
      `SELECT j.feed_seq::text, j.post_id, j.author_id, j.roles, j.watch_max, j.actor_id, j.after_agent, j.pages,
              f.event_id, f.type, f.occurred_at, f.data
       FROM (SELECT * FROM inbox_fanout ORDER BY feed_seq LIMIT 1 FOR UPDATE SKIP LOCKED) j
       LEFT JOIN feed_events f ON f.seq = j.feed_seq`,
    );
    const job = r.rows[0];
    if (!job) return undefined;
    if (job.event_id === null || job.type === null || job.occurred_at === null || job.data === null) {
      await tx.query("DELETE FROM inbox_fanout WHERE feed_seq = $1", [job.feed_seq]);
      return { feedSeq: job.feed_seq, read: 0, written: 0, done: true };
    }
    const spec = { postId: job.post_id, authorId: job.author_id, roles: job.roles, watchMax: job.watch_max };
    const page = await audiencePage(tx, spec, job.after_agent, pageSize);
    const to = await notifiable(tx, job.post_id, job.actor_id, page);
    const held =
      to.length === 0
        ? new Set<string>()
        : new Set(
            (
              await tx.query<{ agent_id: string }>(
                "SELECT DISTINCT agent_id FROM inbox_items WHERE agent_id = ANY($1::text[]) AND event_id = $2",
                [to, job.event_id],
              )
            ).rows.map((x) => x.agent_id),
          );
    const written = await addInboxItems(
      tx,
      to.filter((a) => !held.has(a)),
      {
        eventId: job.event_id,
        type: job.type,
        postId: job.post_id,
        actorId: job.actor_id ?? undefined,
        occurredAt: job.occurred_at.toISOString(),
        data: job.data,
      },
    );
    await hook?.({ feedSeq: job.feed_seq, page: job.pages + 1, written });
    const done = page.length < pageSize;
    if (done) await tx.query("DELETE FROM inbox_fanout WHERE feed_seq = $1", [job.feed_seq]);
    else
      await tx.query("UPDATE inbox_fanout SET after_agent = $2, pages = pages + 1 WHERE feed_seq = $1", [
        job.feed_seq,
        page[page.length - 1],
      ]);
    return { feedSeq: job.feed_seq, read: page.length, written, done };
  });
}

/** Settings of the fan-out worker. */
export interface FanoutOptions {
  /** Recipients per page (INBOX_FANOUT_PAGE). */
  pageSize: number;
  /** Safety poll, ms: jobs queued by other replicas, or left by a crashed one. */
  pollMs: number;
  /** Test seam (see PageHook). */
  hook?: PageHook;
}

/**
 * Runs the queued inbox fan-outs (docs/design/notifications.md#paged-inbox-fan-out) a page at a time until none is free, when woken
 * (`notify`, after an ingest that queued one commits) and on a safety poll. One page in flight per
 * worker: a page holds one connection for its few statements, never the feed lock.
 */
export class FanoutWorker implements WorkQueueSource {
  private readonly loop: WakeLoop;
  private unregister: (() => void) | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: FanoutOptions,
    private readonly log: Logger,
  ) {
    this.loop = new WakeLoop(
      () => this.drain(),
      opts.pollMs,
      log,
      "inbox fan-out page failed; retrying at the next poll",
    );
  }

  /** Starts polling (and running what is queued now); reports the queue as `aps_work_queue{queue="inbox_fanout"}`. */
  start(): void {
    this.unregister ??= registerWorkQueue(this, "inbox_fanout");
    this.loop.start();
  }

  /**
   * The queued fan-outs (all replicas'): jobs and the age of the oldest, seconds (WorkQueueSource;
   * one read of a table that holds only unfinished jobs).
   */
  async queueState(): Promise<{ depth: number; oldestSeconds: number }> {
    const r = await this.pool.query<{ depth: number; oldest: number }>(
      `SELECT count(*)::int AS depth, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
       FROM inbox_fanout`,
    );
    return { depth: r.rows[0]!.depth, oldestSeconds: r.rows[0]!.oldest };
  }

  /** Wakes the worker now. */
  notify(): void {
    this.loop.notify();
  }

  /** Stops after the page in flight (a page cut short would only be redone). */
  stop(): Promise<void> {
    this.unregister?.();
    this.unregister = undefined;
    return this.loop.stop();
  }

  /** Runs pages until no job is free or the worker stops. */
  private async drain(): Promise<void> {
    while (!this.loop.stopped) {
      const p = await runFanoutPage(this.pool, this.opts.pageSize, this.opts.hook);
      if (!p) return;
      if (p.done) this.log.debug({ feedSeq: p.feedSeq }, "inbox fan-out finished");
    }
  }
}
