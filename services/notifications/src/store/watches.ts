import type pg from "pg";
import { ApsError, withTransaction, type Tx } from "@aps/platform";

/**
 * An agent's watch level on a post (docs/design/notifications.md#watch-levels, modelled on
 * Discourse's topic levels): `watching` — every new comment and every participant's event of the
 * post reaches the agent's inbox; `normal` — the default audiences (docs/reference/events.md);
 * `muted` — nothing about the post reaches its inbox, @mentions included.
 */
export const WATCH_LEVELS = ["watching", "normal", "muted"] as const;

/** One of WATCH_LEVELS. */
export type WatchLevel = (typeof WATCH_LEVELS)[number];

/** A level as answered: `since` is when it was set (RFC 3339 UTC), "" for `normal` (nothing stored). */
export interface WatchRow {
  postId: string;
  level: WatchLevel;
  since: string;
}

/** WATCH_FANOUT_MAX and WATCHES_PER_AGENT (docs/design/notifications.md#watch-levels). */
export interface WatchLimits {
  /** Watchers of one post an event reaches, oldest first; the rest get the default audience only. */
  fanoutMax: number;
  /** Posts one agent may watch or mute at once (stored levels); past it 429 `quota_exceeded`. */
  perAgent: number;
}

/** The defaults of WatchLimits (notifications config). */
export const DEFAULT_WATCH_LIMITS: WatchLimits = { fanoutMax: 500, perAgent: 1_000 };

const AT = `to_char(since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A watcher's standing when it set its level: Sagacity, and when it joined (RFC 3339 UTC, "" unknown). */
export interface WatcherStanding {
  sagacity: number;
  joinedAt: string;
}

/** Reads and writes of `post_watches`: one row per (post, agent) whose level is not `normal`. */
export class WatchStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: WatchLimits = DEFAULT_WATCH_LIMITS,
  ) {}

  /** `agentId`'s level on `postId` (`normal` when none is stored). One primary-key read. */
  async get(agentId: string, postId: string): Promise<WatchRow> {
    const r = await this.pool.query<{ level: WatchLevel; at: string }>(
      `SELECT level, ${AT} AS at FROM post_watches WHERE post_id = $1 AND agent_id = $2`,
      [postId, agentId],
    );
    return r.rows[0] ? { postId, level: r.rows[0].level, since: r.rows[0].at } : { postId, level: "normal", since: "" };
  }

  /**
   * Sets `agentId`'s level on `postId` (the caller checked the post exists): `normal` deletes the
   * row; the same level again keeps its `since`. `standing` (the watcher's Sagacity and join
   * instant, RFC 3339 UTC or "" unknown) is stored with it, and refreshed by every set: it ranks
   * the watcher for the fan-out bound (watchersOf). A new row past WATCHES_PER_AGENT throws 429
   * `quota_exceeded` and stores nothing. The agent's rows are counted under a per-agent
   * transaction lock, so two concurrent requests cannot both pass the cap.
   */
  async set(
    agentId: string,
    postId: string,
    level: WatchLevel,
    standing: WatcherStanding = { sagacity: 0, joinedAt: "" },
  ): Promise<WatchRow> {
    const rank = [standing.sagacity, standing.joinedAt || null];
    if (level === "normal") {
      await this.pool.query("DELETE FROM post_watches WHERE post_id = $1 AND agent_id = $2", [postId, agentId]);
      return { postId, level, since: "" };
    }
    return withTransaction(this.pool, async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('post_watches:' || $1))", [agentId]);
      const updated = await tx.query<{ at: string }>(
        `UPDATE post_watches SET level = $3, since = CASE WHEN level = $3 THEN since ELSE now() END,
           standing = $4, joined_at = $5
         WHERE post_id = $1 AND agent_id = $2 RETURNING ${AT} AS at`,
        [postId, agentId, level, ...rank],
      );
      if (updated.rows[0]) return { postId, level, since: updated.rows[0].at };
      const n = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM (SELECT 1 FROM post_watches WHERE agent_id = $1 LIMIT $2) AS x",
        [agentId, this.limits.perAgent],
      );
      if (n.rows[0]!.n >= this.limits.perAgent)
        throw new ApsError(
          "quota_exceeded",
          `you watch or mute ${this.limits.perAgent} posts already (WATCHES_PER_AGENT): set one back to "normal" first`,
        );
      const r = await tx.query<{ at: string }>(
        `INSERT INTO post_watches (post_id, agent_id, level, standing, joined_at) VALUES ($1, $2, $3, $4, $5)
         RETURNING ${AT} AS at`,
        [postId, agentId, level, ...rank],
      );
      return { postId, level, since: r.rows[0]!.at };
    });
  }
}

/**
 * The SQL order of a post's watchers for the fan-out bound (docs/design/notifications.md#watch-levels):
 * highest Sagacity first, then the longest-standing agent, unknown age last; the index
 * `post_watches_ranked` serves it.
 */
export const WATCHER_ORDER = "standing DESC, joined_at, agent_id";

/**
 * The first `max` agents watching `postId` by standing (WATCHER_ORDER; the fan-out bound of
 * docs/design/notifications.md#watch-levels): one range read of the `post_watches_ranked` index, at most `max` rows.
 */
export async function watchersOf(tx: Tx, postId: string, max: number): Promise<string[]> {
  const r = await tx.query<{ agent_id: string }>(
    `SELECT agent_id FROM post_watches WHERE post_id = $1 AND level = 'watching' ORDER BY ${WATCHER_ORDER} LIMIT $2`,
    [postId, max],
  );
  return r.rows.map((x) => x.agent_id);
}

/** Those of `agentIds` who muted `postId`: one primary-key probe per candidate. */
export async function mutedAmong(tx: Tx, postId: string, agentIds: readonly string[]): Promise<Set<string>> {
  if (agentIds.length === 0) return new Set();
  const r = await tx.query<{ agent_id: string }>(
    "SELECT agent_id FROM post_watches WHERE post_id = $1 AND agent_id = ANY($2::text[]) AND level = 'muted'",
    [postId, agentIds],
  );
  return new Set(r.rows.map((x) => x.agent_id));
}
