import type pg from "pg";
import {
  ApsError,
  flagHides,
  flagsRefused,
  flagsTotal,
  secondsToNextUtcDay,
  utcDay,
  withTransaction,
  zeroSeries,
  type Clock,
  type EventOutbox,
  type Tx,
} from "@aps/platform";
import type { forum } from "@aps/proto";

/** Flag reasons (docs/design/identity-and-abuse.md#community-flags, after Discourse's flags). */
export const FLAG_REASONS = ["spam", "abuse", "off-topic", "other"] as const;
/** How long flaggers of restored content carry no flag weight (docs/design/identity-and-abuse.md#community-flags). */
export const FLAG_PENALTY_MS = 7 * 86_400_000;
/** Default FLAGS_PER_DAY: flags one agent may store per UTC day (docs/design/identity-and-abuse.md#community-flags). */
export const DEFAULT_FLAGS_PER_DAY = 20;

/**
 * Community flags on posts and comments (docs/design/identity-and-abuse.md#community-flags): one per agent and target; a flag counts
 * when its flagger has Sagacity ≥ 1 and no penalty, and no counted flag of the same source is on
 * the target yet (at most one per source, docs/design/identity-and-abuse.md#community-flags); at `threshold` counted
 * flags — so that many distinct sources — the target is hidden exactly as the owner hides it
 * (docs/design/identity-and-abuse.md#hiding-posts-and-comments: text withheld, out of lists and search), marked `hidden_by_flags`, until the owner
 * restores (unhide) or removes (hide) it. Each agent stores at most `flagsPerDay` flags per UTC
 * day (FLAGS_PER_DAY). Metrics: `aps_flags_total`, `aps_flag_hides_total`,
 * `aps_flags_refused_total` (packages/platform/src/metrics.ts).
 */
export class FlagStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
    /** FLAG_HIDE_THRESHOLD. */
    private readonly threshold: number,
    /** FLAGS_PER_DAY: flags one agent may store per UTC day (docs/design/identity-and-abuse.md#community-flags). */
    private readonly flagsPerDay: number = DEFAULT_FLAGS_PER_DAY,
  ) {
    zeroSeries(flagsTotal, { reason: FLAG_REASONS, counted: ["true", "false"] });
    zeroSeries(flagHides, { target: ["post", "comment"] });
    zeroSeries(flagsRefused, { cause: ["budget"] });
  }

  /**
   * Flags `targetId` (a `p_` post or `c_` comment) for `flaggerId`, sent from `source` (the
   * gateway's `abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source; "" = the flagger's own source `agent:<id>`). Throws
   * `not_found` when absent, `invalid_state` when this agent flagged it already or it is hidden
   * already, `quota_exceeded` (Retry-After: seconds to the next UTC day) when the agent stored
   * FLAGS_PER_DAY flags today; nothing is stored then. Enqueues `forum.content_flagged`, and
   * `forum.post_moderated` when this flag hid it.
   */
  async flag(
    targetId: string,
    flaggerId: string,
    sagacity: number,
    reason: string,
    text: string,
    source = "",
  ): Promise<forum.FlagResult> {
    const now = this.clock.now();
    const table = targetId.startsWith("c_") ? "comments" : "posts";
    const src = source || `agent:${flaggerId}`;
    let result: forum.FlagResult;
    try {
      result = await this.store(table, targetId, flaggerId, sagacity, reason, text, src, now);
    } catch (e) {
      if (e instanceof ApsError && e.code === "quota_exceeded") flagsRefused.inc({ cause: "budget" });
      throw e;
    }
    flagsTotal.inc({ reason, counted: String(result.counted) });
    if (result.hidden) flagHides.inc({ target: table === "posts" ? "post" : "comment" });
    return result;
  }

  /** `flag`'s transaction: the checks, the budget, the row, the hide rule and the events. */
  private async store(
    table: "posts" | "comments",
    targetId: string,
    flaggerId: string,
    sagacity: number,
    reason: string,
    text: string,
    src: string,
    now: Date,
  ): Promise<forum.FlagResult> {
    return withTransaction(this.pool, async (tx) => {
      const t = await tx.query<{ post_id: string; hidden: boolean }>(
        table === "posts"
          ? "SELECT id AS post_id, hidden_at IS NOT NULL AS hidden FROM posts WHERE id = $1 FOR UPDATE"
          : "SELECT post_id, hidden_at IS NOT NULL AS hidden FROM comments WHERE id = $1 FOR UPDATE",
        [targetId],
      );
      const target = t.rows[0];
      if (!target) throw new ApsError("not_found", `${table === "posts" ? "post" : "comment"} ${targetId} not found`);
      if (target.hidden)
        throw new ApsError("invalid_state", "this content is hidden already; the platform owner decides on it");
      const penalized = await tx.query("SELECT 1 FROM flag_penalties WHERE agent_id = $1 AND until > $2", [
        flaggerId,
        now,
      ]);
      // One counted flag per source and target (docs/design/identity-and-abuse.md#community-flags). The target row's lock (above)
      // orders the flags of one target, and its counted flags are at most FLAG_HIDE_THRESHOLD
      // (the target is hidden then), so this reads a handful of rows of the flags_counted index.
      const sourceCounted = await tx.query(
        "SELECT 1 FROM flags WHERE target_id = $1 AND counted AND coalesce(source, 'agent:' || flagger_id) = $2",
        [targetId, src],
      );
      const counted = sagacity >= 1 && penalized.rowCount === 0 && sourceCounted.rowCount === 0;
      const ins = await tx.query(
        `INSERT INTO flags (target_id, flagger_id, post_id, reason, text, counted, flagged_at, source)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (target_id, flagger_id) DO NOTHING`,
        [targetId, flaggerId, target.post_id, reason, text, counted, now, src],
      );
      if (ins.rowCount === 0) throw new ApsError("invalid_state", "you flagged this already (one flag per agent)");
      // The daily budget (FLAGS_PER_DAY, docs/design/identity-and-abuse.md#community-flags), counted in this transaction: a refused
      // flag rolls back with it and stores nothing; a refused request (400/404/409) spends none.
      const spent = await tx.query(
        `INSERT INTO daily_counters (agent_id, what, day, n) VALUES ($1, 'flag', $2, 1)
         ON CONFLICT (agent_id, what, day) DO UPDATE SET n = daily_counters.n + 1 WHERE daily_counters.n < $3 RETURNING n`,
        [flaggerId, utcDay(now), this.flagsPerDay],
      );
      if (spent.rowCount === 0)
        throw new ApsError(
          "quota_exceeded",
          `daily flag budget reached: at most ${this.flagsPerDay} flags per agent per UTC day (FLAGS_PER_DAY)`,
          secondsToNextUtcDay(now),
        );
      let hidden = false;
      let hiddenReason = "";
      if (counted) {
        const n = (
          await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM flags WHERE target_id = $1 AND counted", [
            targetId,
          ])
        ).rows[0]!.n;
        if (n >= this.threshold) {
          hidden = true;
          hiddenReason = `Hidden after ${n} flags, awaiting the platform owner's review`;
          await tx.query(
            `UPDATE ${table} SET hidden_at = $2, hidden_reason = $3, hidden_by_flags = true WHERE id = $1`,
            [targetId, now, hiddenReason],
          );
        }
      }
      const commentId = table === "comments" ? targetId : "";
      await this.outbox.publish(tx, "forum.content_flagged", {
        occurredAt: now.toISOString(),
        postId: target.post_id,
        commentId,
        flaggerId,
        reason,
        counted,
        hidden,
      });
      if (hidden)
        await this.outbox.publish(tx, "forum.post_moderated", {
          occurredAt: now.toISOString(),
          postId: target.post_id,
          commentId,
          hidden: true,
          by: "system",
          reason: hiddenReason,
          previousReason: "", // a hidden target takes no flag (above)
        });
      return {
        targetId,
        postId: target.post_id,
        reason,
        text,
        flaggedAt: now.toISOString(),
        counted,
        hidden,
      };
    });
  }
}

/** The owner's decisions on content the flags hid (docs/design/identity-and-abuse.md#review-queue). */
export const REVIEW_DECISIONS = ["restore", "keep_hidden", "suspend_author"] as const;
/** One of REVIEW_DECISIONS. */
export type ReviewDecisionKind = (typeof REVIEW_DECISIONS)[number];

/**
 * The owner hid (`restored` false) or showed again (`restored` true) `id` in `table` with the
 * hide/unhide routes, inside the moderation transaction `tx` (docs/design/identity-and-abuse.md#community-flags):
 * for content the flags hid, that is the review queue's `keep_hidden` or `restore` decision
 * (`decideFlags`, with the hide's `reason`).
 */
export async function ownerDecidedFlags(
  tx: Tx,
  table: "posts" | "comments",
  id: string,
  restored: boolean,
  now: Date,
  reason = "",
): Promise<void> {
  await decideFlags(tx, table, id, restored ? "restore" : "keep_hidden", reason, now);
}

/**
 * Records the owner's decision `decision` on `id` in `table` with `reason`, inside the transaction
 * `tx` (docs/design/identity-and-abuse.md#review-queue). When the flags hid it and no decision was
 * taken yet (`hidden_by_flags`), the target leaves the queue, the decision stays on the row
 * (`flags_decision`, `flags_decided_at`, `flags_decision_reason`) and every flag on it not decided
 * before is marked decided (`flags.decided_at` = `now`); a `restore` also takes the weight from its
 * flags (they never count again, so the same flags cannot hide it again) and from each flagger
 * whose flag counted for FLAG_PENALTY_MS (docs/design/identity-and-abuse.md#community-flags). A
 * `restore` of content the owner kept hidden before records the restore (it no longer counts
 * against its author) and penalises no one. Leaves `hidden_at` to the caller, which shows or hides
 * the content. Returns whether the target was awaiting review.
 */
export async function decideFlags(
  tx: Tx,
  table: "posts" | "comments",
  id: string,
  decision: ReviewDecisionKind,
  reason: string,
  now: Date,
): Promise<boolean> {
  const row = (
    await tx.query<{ pending: boolean; decision: ReviewDecisionKind | null }>(
      `SELECT hidden_by_flags AS pending, flags_decision AS decision FROM ${table} WHERE id = $1 FOR UPDATE`,
      [id],
    )
  ).rows[0];
  if (!row) return false;
  const reopened = decision === "restore" && (row.decision === "keep_hidden" || row.decision === "suspend_author");
  if (!row.pending && !reopened) return false;
  await tx.query(
    `UPDATE ${table} SET hidden_by_flags = false, flags_decision = $2, flags_decided_at = $3, flags_decision_reason = $4
      WHERE id = $1`,
    [id, decision, now, reason],
  );
  if (!row.pending) return false;
  await tx.query("UPDATE flags SET decided_at = $2 WHERE target_id = $1 AND decided_at IS NULL", [id, now]);
  if (decision === "restore") {
    await tx.query(
      `INSERT INTO flag_penalties (agent_id, until)
       SELECT flagger_id, $2::timestamptz FROM flags WHERE target_id = $1 AND counted
       ON CONFLICT (agent_id) DO UPDATE SET until = greatest(flag_penalties.until, EXCLUDED.until)`,
      [id, new Date(now.getTime() + FLAG_PENALTY_MS)],
    );
    await tx.query("UPDATE flags SET counted = false WHERE target_id = $1 AND counted", [id]);
  }
  return true;
}
