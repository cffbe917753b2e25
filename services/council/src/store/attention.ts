import type { council } from "@aps/proto";
import { PROGRESS_DUE_EVERY_MS } from "../rules.js";
import { concernOf } from "./concerns-progress-read.js";
import type { CouncilRepository } from "./repository.js";

/** A page of one attention list: at most `limit` items, `more` when the read found one more. */
function page<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return rows.length > limit ? { rows: rows.slice(0, limit), more: true } : { rows, more: false };
}

/**
 * The Council's share of `GET /v1/me/attention` (docs/design/agents.md#attention): what awaits one agent's action, each list one query through an index and capped
 * at `limit` (+1 row read to answer `more`), never a scan of all cases.
 */
export class CouncilAttention {
  constructor(private readonly repo: CouncilRepository) {}

  /**
   * Open cases (agenda, review) without a ballot of `councillorId`, nearest deadline first: a walk
   * of the partial index cases_due (open cases only) checked against the ballots primary key, so
   * its cost is bounded by the open cases, not by every case ever opened.
   */
  async pendingBallots(councillorId: string, limit: number): Promise<council.ListPendingBallotsResponse> {
    const r = await this.repo.pool.query<{ post_id: string; status: string; opened_at: Date; deadline: Date }>(
      `SELECT c.post_id, c.status, c.opened_at, c.deadline FROM cases c
       WHERE c.status IN ('agenda', 'review')
         AND NOT EXISTS (SELECT 1 FROM ballots b WHERE b.post_id = c.post_id AND b.councillor_id = $1)
       ORDER BY c.deadline, c.post_id LIMIT $2`,
      [councillorId, limit + 1],
    );
    const p = page(r.rows, limit);
    return {
      items: p.rows.map((x) => ({
        postId: x.post_id,
        status: x.status,
        openedAt: x.opened_at.toISOString(),
        deadline: x.deadline.toISOString(),
      })),
      more: p.more,
    };
  }

  /**
   * Unresolved concerns on `authorId`'s open cases, oldest first (cases_author_open_concerns, then
   * concerns_unresolved). A concern left open by a close is no longer actionable and not listed.
   */
  async openConcerns(authorId: string, limit: number): Promise<council.ListOpenConcernsResponse> {
    const r = await this.repo.pool.query<Parameters<typeof concernOf>[0]>(
      `SELECT k.* FROM cases c JOIN concerns k ON k.post_id = c.post_id AND k.resolved_at IS NULL
       WHERE c.author_id = $1 AND c.open_concerns > 0 AND c.status IN ('agenda', 'review')
       ORDER BY k.raised_at, k.id LIMIT $2`,
      [authorId, limit + 1],
    );
    const p = page(r.rows, limit);
    return { items: p.rows.map(concernOf), more: p.more };
  }

  /**
   * Cases in their last call (docs/reference/council.md "Last call"), nearest end first: every one
   * for a councillor (`all`: any may raise a concern), else `authorId`'s own. A range read of the
   * partial index cases_last_call_due (open cases in a last call only), the author filter applied
   * on it: bounded by the last calls running, never by every case.
   */
  async lastCalls(authorId: string, all: boolean, limit: number): Promise<council.ListLastCallsResponse> {
    const r = await this.repo.pool.query<{
      post_id: string;
      status: string;
      last_call_outcome: string;
      last_call_ends: Date;
    }>(
      `SELECT post_id, status, last_call_outcome, last_call_ends FROM cases
       WHERE last_call_ends IS NOT NULL AND status IN ('agenda', 'review') AND ($1 OR author_id = $2)
       ORDER BY last_call_ends, post_id LIMIT $3`,
      [all, authorId, limit + 1],
    );
    const p = page(r.rows, limit);
    return {
      items: p.rows.map((x) => ({
        postId: x.post_id,
        status: x.status,
        outcome: x.last_call_outcome,
        endsAt: x.last_call_ends.toISOString(),
      })),
      more: p.more,
    };
  }

  /**
   * Decisions whose review date has come (docs/reference/council.md "Decision records"), oldest
   * first: every one for a councillor (`all`), else `authorId`'s own. A range read of the partial
   * index cases_review_at up to now: bounded by the review dates set, never by every case. A
   * review stays due until a new statement moves or clears its date.
   */
  async reviewsDue(authorId: string, all: boolean, limit: number): Promise<council.ListReviewsDueResponse> {
    const r = await this.repo.pool.query<{ post_id: string; status: string; review_at: Date }>(
      `SELECT post_id, status, review_at FROM cases
       WHERE review_at IS NOT NULL AND review_at <= $1 AND ($2 OR author_id = $3)
       ORDER BY review_at, post_id LIMIT $4`,
      [this.repo.clock.now(), all, authorId, limit + 1],
    );
    const p = page(r.rows, limit);
    return {
      items: p.rows.map((x) => ({ postId: x.post_id, status: x.status, reviewAt: x.review_at.toISOString() })),
      more: p.more,
    };
  }

  /**
   * `executorId`'s implementing cases whose progress update is due by the clock: none since the
   * hand-off (due at the hand-off), or the latest (by the executor or the chief) older than
   * PROGRESS_DUE_EVERY_MS. Earliest due first; cases_executor_implementing, then the latest row
   * of progress_updates_post per case.
   */
  async progressDue(executorId: string, limit: number): Promise<council.ListProgressDueResponse> {
    const now = this.repo.clock.now();
    const r = await this.repo.pool.query<{
      post_id: string;
      handoff_at: Date;
      last_at: Date | null;
      percent: number | null;
      due_at: Date;
    }>(
      `SELECT * FROM (
         SELECT c.post_id, c.handoff_at, p.at AS last_at, p.percent,
                COALESCE(p.at + $3 * interval '1 millisecond', c.handoff_at) AS due_at
         FROM cases c
         LEFT JOIN LATERAL (SELECT u.at, u.percent FROM progress_updates u WHERE u.post_id = c.post_id
                            ORDER BY u.seq DESC LIMIT 1) p ON true
         WHERE c.status = 'implementing' AND c.handoff_executor = $1 AND c.handoff_at IS NOT NULL) d
       WHERE d.due_at <= $2 ORDER BY d.due_at, d.post_id LIMIT $4`,
      [executorId, now, PROGRESS_DUE_EVERY_MS, limit + 1],
    );
    const p = page(r.rows, limit);
    return {
      items: p.rows.map((x) => ({
        postId: x.post_id,
        handoffAt: x.handoff_at.toISOString(),
        lastReportedAt: x.last_at?.toISOString() ?? "",
        percent: x.percent ?? -1,
        dueAt: x.due_at.toISOString(),
      })),
      more: p.more,
    };
  }
}
