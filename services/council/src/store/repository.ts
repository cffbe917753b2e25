import type pg from "pg";
import {
  ApsError,
  decodeTupleCursor,
  encodeTupleCursor,
  EventOutbox,
  IdempotentWrites,
  PG_TIMESTAMPTZ_TEXT,
  processOnce,
  withTransaction,
  type BallotSealing,
  type Clock,
  type IdempotencyScope,
  type Tx,
} from "@aps/platform";
import { council } from "@aps/proto";
import { deadlineOutcome, decisiveOutcome, type DeadlineOutcome, type Position, type Tally } from "../rules.js";
import { loadConcernsAndProgress } from "./concerns-progress-read.js";

interface CaseRow {
  post_id: string;
  author_id: string;
  status: string;
  seats: number;
  opened_at: Date;
  opened_by: string;
  deadline: Date;
  closed_at: Date | null;
  approvals: number;
  rejections: number;
  abstentions: number;
  recusals: number;
  /** The k of COUNCIL_MIN_OWNERS the case opened with (0: off) and the distinct verified owners of its approve ballots (docs/design/council.md#operator-diverse-adoption). */
  min_owners: number;
  approving_owners: number;
  handoff_implementation: string | null;
  handoff_executor: string | null;
  handoff_at: Date | null;
  handoff_by: string | null;
  duplicate_of: string | null;
  open_concerns: number;
  progress_percent: number | null;
  withdrawn_reason: string | null;
  /** The outcome a running last call announces, with its start and end; null without one. */
  last_call_outcome: "adopted" | "rejected" | null;
  last_call_started: Date | null;
  last_call_ends: Date | null;
  /** Who reads the positions before the close (docs/reference/council.md "Sealed ballots"). */
  sealing: BallotSealing;
  /** The councillor whose ballot decided the outcome (started the last call or closed the case); null otherwise. */
  decided_by: string | null;
  /** The outcome statement, its writer and time, and the review date (docs/reference/council.md "Decision records"). */
  decision_statement: string | null;
  decision_by: string | null;
  decision_at: Date | null;
  review_at: Date | null;
  review_announced_at: Date | null;
  /** Status `superseded`: the adopted proposal that superseded or replaced this one (docs/reference/council.md "Links"). */
  superseded_by: string | null;
  /** bigint: +1 per change of the case (docs/design/council.md#the-forums-projection-of-the-case); 0 until its first summary. */
  revision: string;
}

/** A case row as stored (the case actions in store/case-actions.ts read it too). */
export type { CaseRow };

/** A pool or a transaction's client: where a read runs. */
export type Queryable = Pick<pg.Pool, "query">;

/** Statuses in which ballots are accepted (docs/design/council.md#statuses-and-the-lifecycle-rule). */
const OPEN_STATUSES = ["agenda", "review"];

/** The reason recorded on the ballot that recuses a seated author from its case (docs/reference/council.md "Positions"). */
export const AUTHOR_RECUSAL_REASON = "The author of this proposal: recused from its case automatically.";

/**
 * Whether a case in `status` shows the last call it ran (outcome `outcome`): while it is open, and
 * once it closed as that last call announced (the record of the last call it passed) — not after
 * a withdrawal or a duplicate closed it during the last call (docs/reference/council.md "Last call").
 */
function lastCallShown(status: string, outcome: string): boolean {
  if (OPEN_STATUSES.includes(status)) return true;
  return outcome === "rejected"
    ? status === "rejected"
    : ["adopted", "implementing", "completed", "superseded"].includes(status);
}

/** The tally of case row `c` (its counts by position and its seats). */
export function tallyOf(c: CaseRow): Tally {
  return {
    seats: c.seats,
    approvals: c.approvals,
    rejections: c.rejections,
    abstentions: c.abstentions,
    recusals: c.recusals,
    approvingOwners: c.approving_owners,
    minOwners: c.min_owners,
  };
}

/**
 * Council storage and state machine on the service's own schema. Every transition locks the
 * case row (`FOR UPDATE`), records a transition row and enqueues its event in the same
 * transaction, so the case and its events never disagree.
 */
export class CouncilRepository {
  /** Writes this service's events to its outbox (docs/design/events.md#catalogue); shared with store/case-actions.ts. */
  readonly outbox: EventOutbox;
  /** Outcomes of keyed writes, stored with the write (docs/design/edge.md#idempotency-key). */
  readonly idempotent: IdempotentWrites;

  constructor(
    readonly pool: pg.Pool,
    readonly clock: Clock,
    /** Case lifetime before the deadline close, ms (COUNCIL_DEADLINE). */
    private readonly deadlineMs: number,
    /** Wakes the outbox relay; called after a commit that wrote events (EventOutbox, docs/design/events.md#catalogue). */
    wake: () => void = () => undefined,
    /**
     * How long an outcome decided by ballots waits before it is final, ms (LAST_CALL_MS,
     * docs/reference/council.md "Last call"); 0 closes the case at the deciding ballot.
     */
    readonly lastCallMs = 0,
    /**
     * The sealing of the cases opened from now on (BALLOT_SEALING, docs/reference/council.md
     * "Sealed ballots"); "off" keeps every position public.
     */
    readonly sealing: BallotSealing = "off",
    /**
     * The k of the cases opened from now on (COUNCIL_MIN_OWNERS,
     * docs/design/council.md#operator-diverse-adoption): an adoption needs approve ballots from at
     * least k distinct verified owners; 0 turns the rule off.
     */
    readonly minOwners = 0,
  ) {
    this.outbox = new EventOutbox(wake);
    this.idempotent = new IdempotentWrites(pool, clock);
  }

  /**
   * Opens a case on `postId` in `status` (`agenda` from the heat rule, `review` from a
   * nomination). Returns false when a case already exists (nothing changes then).
   */
  async openCase(
    tx: Tx,
    postId: string,
    authorId: string,
    status: "agenda" | "review",
    by: string,
    seats: number,
    now: Date,
    authorSeated = false,
  ): Promise<boolean> {
    const deadline = new Date(now.getTime() + this.deadlineMs);
    const r = await tx.query(
      `INSERT INTO cases (post_id, author_id, status, seats, opened_at, opened_by, deadline, sealing, min_owners)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (post_id) DO NOTHING`,
      [postId, authorId, status, seats, now, by, deadline, this.sealing, this.minOwners],
    );
    if (r.rowCount === 0) return false;
    if (authorSeated) {
      // A seated author is recused from its own case from the start (docs/reference/council.md "Positions").
      await tx.query(
        `INSERT INTO ballots (post_id, councillor_id, vote, reason, cast_at) VALUES ($1, $2, 'recuse', $3, $4)`,
        [postId, authorId, AUTHOR_RECUSAL_REASON, now],
      );
      await tx.query("UPDATE cases SET recusals = 1 WHERE post_id = $1", [postId]);
    }
    await this.transition(tx, postId, status, now, by);
    await this.outbox.publish(tx, "council.case_opened", {
      occurredAt: now.toISOString(),
      postId,
      authorId,
      status,
      seats,
      deadline: deadline.toISOString(),
      openedBy: by,
    });
    return true;
  }

  /**
   * Opens an `agenda` case for the heat rule's `forum.post_on_agenda` event `eventId`, exactly
   * once per event (processed_events in the same transaction) and once per post. `authorSeated`:
   * the author is a seated councillor, recused from the case at its opening.
   */
  async openFromAgenda(
    eventId: string,
    postId: string,
    authorId: string,
    seats: number,
    authorSeated = false,
  ): Promise<void> {
    const now = this.clock.now();
    await processOnce(this.pool, "council-agenda", eventId, async (tx) => {
      if (await this.openCase(tx, postId, authorId, "agenda", "system", seats, now, authorSeated))
        await this.summarize(tx, postId, now);
    });
  }

  /**
   * Opens the `agenda` case of a post the forum already shows on the agenda, when a ballot
   * arrives before the `post_on_agenda` event did (read-your-writes); a no-op if it exists.
   * `authorSeated` as in {@link openFromAgenda}.
   */
  async ensureAgendaCase(postId: string, authorId: string, seats: number, authorSeated = false): Promise<void> {
    const now = this.clock.now();
    await withTransaction(this.pool, async (tx) => {
      if (await this.openCase(tx, postId, authorId, "agenda", "system", seats, now, authorSeated))
        await this.summarize(tx, postId, now);
    });
  }

  /**
   * Nomination: opens a `review` case and casts the nominator's approve ballot (seed: "The
   * nominator's Council vote in favour is cast automatically"); may close the case at once.
   * Throws `invalid_state` when a case already exists. With a keyed `idem` scope, a retry returns
   * the case as the first call left it (docs/design/edge.md#idempotency-key), as do the other Council writes.
   * `ownerDomain`: the nominator's verified owner domain now ("" when not verified), kept on its ballot.
   */
  async nominate(
    postId: string,
    authorId: string,
    councillorId: string,
    seats: number,
    idem?: IdempotencyScope,
    authorSeated = false,
    ownerDomain = "",
  ): Promise<council.Case> {
    const now = this.clock.now();
    return this.idempotent.run(idem, council.Case, async (tx) => {
      const opened = await this.openCase(tx, postId, authorId, "review", councillorId, seats, now, authorSeated);
      if (!opened)
        throw new ApsError(
          "invalid_state",
          "this proposal is already before the Council (or past it); only open proposals can be nominated",
        );
      await this.ballotInTx(
        tx,
        postId,
        councillorId,
        "approve",
        "Nominated for Council review.",
        now,
        async () => seats,
        ownerDomain,
      );
      return this.summarize(tx, postId, now);
    });
  }

  /**
   * Casts or changes a councillor's ballot while the case is `agenda` or `review`; closes the
   * case when the outcome is decided. Throws `invalid_state` without an open case. A case opened
   * with no councillor seated (`seats` 0) takes its electorate at this first ballot:
   * `seatedNow()` councillors (at least 1, the one acting), stored in `seats` (docs/design/council.md#seats-and-the-electorate).
   * `ownerDomain`: the councillor's verified owner domain now ("" when not verified), kept on the
   * ballot; approve ballots count toward the case's distinct approving owners
   * (docs/design/council.md#operator-diverse-adoption).
   */
  async castBallot(
    postId: string,
    councillorId: string,
    vote: Position,
    reason: string,
    seatedNow: () => Promise<number> = async () => 1,
    idem?: IdempotencyScope,
    ownerDomain = "",
  ): Promise<council.Case> {
    const now = this.clock.now();
    return this.idempotent.run(idem, council.Case, async (tx) => {
      await this.ballotInTx(tx, postId, councillorId, vote, reason, now, seatedNow, ownerDomain);
      return this.summarize(tx, postId, now);
    });
  }

  private async ballotInTx(
    tx: Tx,
    postId: string,
    councillorId: string,
    vote: Position,
    reason: string,
    now: Date,
    seatedNow: () => Promise<number>,
    ownerDomain: string,
  ): Promise<void> {
    const c = await this.lock(tx, postId);
    if (!c || !OPEN_STATUSES.includes(c.status)) {
      throw new ApsError(
        "invalid_state",
        c
          ? `the case is ${c.status}; ballots are accepted only while it is agenda or review`
          : "this proposal is not awaiting the Council",
      );
    }
    if (c.author_id === councillorId)
      throw new ApsError(
        "forbidden",
        "you wrote this proposal: its author is recused from its Council case and cannot ballot on it",
      );
    if (c.seats === 0) {
      // Opened before anyone was seated: the electorate is every councillor seated now (docs/design/council.md#seats-and-the-electorate).
      c.seats = Math.max(1, await seatedNow());
      await tx.query("UPDATE cases SET seats = $2 WHERE post_id = $1", [postId, c.seats]);
    }
    // the position before, for the audit log's `before` (docs/design/identity-and-abuse.md#audit-log); the case is locked
    const previous = await tx.query<{ vote: string }>(
      "SELECT vote FROM ballots WHERE post_id = $1 AND councillor_id = $2",
      [postId, councillorId],
    );
    await tx.query(
      `INSERT INTO ballots (post_id, councillor_id, vote, reason, cast_at, owner_domain) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (post_id, councillor_id) DO UPDATE SET vote = EXCLUDED.vote, reason = EXCLUDED.reason,
         cast_at = EXCLUDED.cast_at, owner_domain = EXCLUDED.owner_domain`,
      [postId, councillorId, vote, reason, now, ownerDomain],
    );
    // one pass over the case's ballots (at most its seats) recounts every position, and the
    // distinct verified owners of the approvals (docs/design/council.md#operator-diverse-adoption)
    const t = await tx.query<
      Pick<CaseRow, "approvals" | "rejections" | "abstentions" | "recusals" | "approving_owners">
    >(
      `UPDATE cases SET (approvals, rejections, abstentions, recusals, approving_owners) = (
         SELECT count(*) FILTER (WHERE vote = 'approve'), count(*) FILTER (WHERE vote = 'reject'),
                count(*) FILTER (WHERE vote = 'abstain'), count(*) FILTER (WHERE vote = 'recuse'),
                count(DISTINCT owner_domain) FILTER (WHERE vote = 'approve' AND owner_domain <> '')
         FROM ballots WHERE post_id = $1)
       WHERE post_id = $1 RETURNING approvals, rejections, abstentions, recusals, approving_owners`,
      [postId],
    );
    Object.assign(c, t.rows[0]!);
    await this.outbox.publish(tx, "council.ballot_cast", {
      occurredAt: now.toISOString(),
      postId,
      councillorId,
      vote,
      approvals: c.approvals,
      rejections: c.rejections,
      abstentions: c.abstentions,
      recusals: c.recusals,
      sealing: c.sealing,
      authorId: c.author_id,
      previousVote: previous.rows[0]?.vote ?? "",
      reason: reason ?? "",
    });
    await this.settle(tx, c, now, councillorId, "ballots_changed");
  }

  /**
   * After a change of locked case `c` (a ballot, a concern raised or resolved), in `tx`: when its
   * ballots decide an outcome (`decisiveOutcome`; an open concern holds an approval back,
   * docs/reference/moderation-and-council-depth.md) a last call starts for `lastCallMs` — or, with `lastCallMs` 0, the case closes
   * at once; a running last call whose outcome no longer holds is cancelled (`why`), and one whose
   * outcome changed starts again (docs/reference/council.md "Last call"). `by` is who changed it.
   */
  async settle(
    tx: Tx,
    c: CaseRow,
    now: Date,
    by: string,
    why: "ballots_changed" | "concern_raised" | "concern_resolved",
  ): Promise<void> {
    const outcome = decisiveOutcome(tallyOf(c), c.open_concerns);
    if (outcome === c.last_call_outcome && outcome) return; // the last call runs on
    if (c.last_call_outcome) await this.cancelLastCall(tx, c, now, by, why);
    if (!outcome) return;
    if (this.lastCallMs === 0) await this.close(tx, c, outcome, now, by);
    else await this.startLastCall(tx, c, outcome, now, by);
  }

  private async startLastCall(tx: Tx, c: CaseRow, outcome: "adopted" | "rejected", now: Date, by: string) {
    const ends = new Date(now.getTime() + this.lastCallMs);
    await tx.query(
      "UPDATE cases SET last_call_outcome = $2, last_call_started = $3, last_call_ends = $4, decided_by = $5 WHERE post_id = $1",
      [c.post_id, outcome, now, ends, by],
    );
    Object.assign(c, { last_call_outcome: outcome, last_call_started: now, last_call_ends: ends, decided_by: by });
    await this.outbox.publish(tx, "council.last_call_started", {
      occurredAt: now.toISOString(),
      postId: c.post_id,
      authorId: c.author_id,
      outcome,
      endsAt: ends.toISOString(),
      by,
    });
  }

  private async cancelLastCall(tx: Tx, c: CaseRow, now: Date, by: string, reason: string) {
    await tx.query(
      "UPDATE cases SET last_call_outcome = NULL, last_call_started = NULL, last_call_ends = NULL, decided_by = NULL WHERE post_id = $1",
      [c.post_id],
    );
    const outcome = c.last_call_outcome ?? "";
    Object.assign(c, { last_call_outcome: null, last_call_started: null, last_call_ends: null, decided_by: null });
    await this.outbox.publish(tx, "council.last_call_cancelled", {
      occurredAt: now.toISOString(),
      postId: c.post_id,
      authorId: c.author_id,
      outcome,
      reason,
      by,
    });
  }

  /**
   * Closes every open case whose last call has ended (as its last call announced), then every one
   * not in a last call whose deadline has passed by the clock, each in its own transaction with
   * `FOR UPDATE SKIP LOCKED`, so several replicas never close one case twice: by the quorum rule
   * (final at once: the case was open for COUNCIL_DEADLINE), or as `lapsed` when no ballot was cast (final; `council.case_closed` with outcome
   * "lapsed" awards no Sagacity — docs/design/council.md#lapse). Returns the count.
   */
  async closeDue(): Promise<number> {
    let closed = 0;
    for (;;) {
      const now = this.clock.now();
      const ended = await withTransaction(this.pool, async (tx) => {
        // a last call that ended: its outcome is final (docs/reference/council.md "Last call")
        const r = await tx.query<CaseRow>(
          `SELECT * FROM cases WHERE status IN ('agenda', 'review') AND last_call_ends <= $1
           ORDER BY last_call_ends LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [now],
        );
        const c = r.rows[0];
        if (!c?.last_call_outcome) return false;
        await this.close(tx, c, c.last_call_outcome, now, "system");
        await this.summarize(tx, c.post_id, now);
        return true;
      });
      if (ended) {
        closed++;
        continue;
      }
      const did = await withTransaction(this.pool, async (tx) => {
        // a case in its last call is not closed by its deadline: the last call decides it
        const r = await tx.query<CaseRow>(
          `SELECT * FROM cases WHERE status IN ('agenda', 'review') AND deadline <= $1 AND last_call_ends IS NULL
           ORDER BY deadline LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [now],
        );
        const c = r.rows[0];
        if (!c) return false;
        // Open concerns make the deadline close a rejection, recorded with it (docs/design/council.md#duplicates).
        const open =
          c.open_concerns > 0
            ? (
                await tx.query<{ id: string }>(
                  "SELECT id FROM concerns WHERE post_id = $1 AND resolved_at IS NULL ORDER BY id",
                  [c.post_id],
                )
              ).rows.map((x) => x.id)
            : [];
        await this.close(tx, c, deadlineOutcome(tallyOf(c), open.length), now, "system", open);
        await this.summarize(tx, c.post_id, now);
        return true;
      });
      if (!did) break;
      closed++;
    }
    return closed;
  }

  /**
   * Announces every decision whose review date has come and was not announced yet
   * (docs/reference/council.md "Decision records"): `council.review_due` once per review date,
   * each case in its own transaction with `FOR UPDATE SKIP LOCKED` (replicas never announce one
   * twice), through the partial index cases_review_unannounced. Returns the count.
   */
  async announceDueReviews(): Promise<number> {
    let announced = 0;
    for (;;) {
      const now = this.clock.now();
      const did = await withTransaction(this.pool, async (tx) => {
        const r = await tx.query<CaseRow>(
          `SELECT * FROM cases WHERE review_at IS NOT NULL AND review_at <= $1 AND review_announced_at IS NULL
           ORDER BY review_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [now],
        );
        const c = r.rows[0];
        if (!c?.review_at) return false;
        await tx.query("UPDATE cases SET review_announced_at = $2 WHERE post_id = $1", [c.post_id, now]);
        await this.outbox.publish(tx, "council.review_due", {
          occurredAt: now.toISOString(),
          postId: c.post_id,
          authorId: c.author_id,
          reviewAt: c.review_at.toISOString(),
        });
        return true;
      });
      if (!did) return announced;
      announced++;
    }
  }

  /**
   * The author withdraws post `postId` while its case is open (`agenda` or `review`): the case
   * closes as `withdrawn` with the reason, by the author (docs/design/council.md#withdrawal); `council.case_closed`
   * carries outcome "withdrawn", which earns no Sagacity. Throws `not_found` without a case,
   * `forbidden` for anyone but the author, `invalid_state` once the case is decided.
   */
  async withdraw(postId: string, agentId: string, reason: string): Promise<council.Case> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const c = await this.lock(tx, postId);
      if (!c) throw new ApsError("not_found", `no Council case for ${postId}`);
      if (c.author_id !== agentId) throw new ApsError("forbidden", "only the author may withdraw a proposal");
      if (!OPEN_STATUSES.includes(c.status))
        throw new ApsError("invalid_state", `the Council case is already ${c.status}; it can no longer be withdrawn`);
      await this.close(tx, c, "withdrawn", now, agentId, [], reason);
      return this.summarize(tx, postId, now);
    });
  }

  /**
   * `forum.post_withdrawn` (the forum withdrew an open proposal): a case opened meanwhile (a
   * nomination racing the withdrawal) closes as withdrawn too. Once per event; a no-op otherwise.
   */
  async withdrawnInForum(eventId: string, postId: string, authorId: string, reason: string): Promise<void> {
    const now = this.clock.now();
    await processOnce(this.pool, "council-withdrawn", eventId, async (tx) => {
      const c = await this.lock(tx, postId);
      if (c && OPEN_STATUSES.includes(c.status)) {
        await this.close(tx, c, "withdrawn", now, authorId, [], reason);
        await this.summarize(tx, postId, now);
      }
    });
  }

  /**
   * Closes locked case `c` as `outcome`: status, transition (with the concerns still open, if
   * any) and `council.case_closed` with the tally of `c`, in `tx`. Only "adopted" and "rejected" are Council outcomes
   * that award Sagacity; "withdrawn" (docs/design/council.md#withdrawal) and "lapsed" (docs/design/council.md#lapse) award none.
   */
  async close(
    tx: Tx,
    c: CaseRow,
    outcome: DeadlineOutcome | "withdrawn",
    now: Date,
    by: string,
    openConcerns: string[] = [],
    reason = "",
  ): Promise<void> {
    // a last call's columns stay: the record of the last call the case passed. The decider: the
    // councillor whose ballot closed it now, or who started the last call that ran its course;
    // none for a deadline close (docs/reference/council.md "Decision records")
    const fromLastCall = outcome === c.last_call_outcome && by === "system";
    const decidedBy =
      outcome === "adopted" || outcome === "rejected"
        ? by !== "system"
          ? by
          : fromLastCall
            ? c.decided_by
            : null
        : null;
    await tx.query(
      "UPDATE cases SET status = $2, closed_at = $3, withdrawn_reason = $4, decided_by = $5 WHERE post_id = $1",
      [c.post_id, outcome, now, outcome === "withdrawn" ? reason : null, decidedBy],
    );
    c.decided_by = decidedBy;
    await this.transition(tx, c.post_id, outcome, now, by, openConcerns);
    if (outcome === "adopted") await this.supersedeTargets(tx, c.post_id, now, by);
    await this.outbox.publish(tx, "council.case_closed", {
      occurredAt: now.toISOString(),
      postId: c.post_id,
      authorId: c.author_id,
      outcome,
      closedAt: now.toISOString(),
      // a last call that ran its course announced the outcome when it started: public votes count
      // as they stood then (docs/reference/sagacity.md "How it is earned")
      decidedAt: (outcome === c.last_call_outcome && c.last_call_started ? c.last_call_started : now).toISOString(),
      approvals: c.approvals,
      rejections: c.rejections,
      abstentions: c.abstentions,
      recusals: c.recusals,
      seats: c.seats,
      openConcerns,
      reason: outcome === "withdrawn" ? reason : "",
      by,
    });
  }

  /**
   * The adoption of `postId` supersedes the decided proposals it declared it `supersedes` or
   * `replaces` (docs/reference/council.md "Links"), in `tx`: each target whose case is adopted,
   * implementing or completed becomes `superseded` (final), with `superseded_by`, a transition,
   * `council.case_superseded` and its new summary. Other targets (open, rejected, none) are left
   * as they are: the link stays on the record.
   */
  private async supersedeTargets(tx: Tx, postId: string, now: Date, by: string): Promise<void> {
    const targets = await tx.query<{ target_id: string }>(
      `SELECT DISTINCT target_id FROM proposal_links WHERE post_id = $1 AND type IN ('supersedes', 'replaces')
       ORDER BY target_id`,
      [postId],
    );
    for (const { target_id } of targets.rows) {
      const t = await this.lock(tx, target_id);
      if (!t || !["adopted", "implementing", "completed"].includes(t.status)) continue;
      await tx.query("UPDATE cases SET status = 'superseded', superseded_by = $2 WHERE post_id = $1", [
        target_id,
        postId,
      ]);
      await this.transition(tx, target_id, "superseded", now, by);
      await this.outbox.publish(tx, "council.case_superseded", {
        occurredAt: now.toISOString(),
        postId: target_id,
        authorId: t.author_id,
        supersededBy: postId,
        by,
      });
      await this.summarize(tx, target_id, now);
    }
  }

  /** Chief's hand-off: `adopted` → `implementing`, recording how and by whom. */
  async recordHandoff(
    postId: string,
    chiefId: string,
    implementation: "self" | "task",
    executor: string,
    idem?: IdempotencyScope,
  ): Promise<council.Case> {
    const now = this.clock.now();
    return this.idempotent.run(idem, council.Case, async (tx) => {
      const c = await this.lock(tx, postId);
      if (!c || c.status !== "adopted")
        throw new ApsError(
          "invalid_state",
          `hand-off needs an adopted proposal; this one is ${c?.status ?? "not before the Council"}`,
        );
      await tx.query(
        "UPDATE cases SET status = 'implementing', handoff_implementation = $2, handoff_executor = $3, handoff_at = $4, handoff_by = $5 WHERE post_id = $1",
        [postId, implementation, executor, now, chiefId],
      );
      await this.transition(tx, postId, "implementing", now, chiefId);
      await this.outbox.publish(tx, "council.handoff_recorded", {
        occurredAt: now.toISOString(),
        postId,
        implementation,
        executor,
        by: chiefId,
        authorId: c.author_id,
      });
      return this.summarize(tx, postId, now);
    });
  }

  /** Chief's completion: `implementing` → `completed`. */
  async complete(postId: string, chiefId: string, idem?: IdempotencyScope): Promise<council.Case> {
    const now = this.clock.now();
    return this.idempotent.run(idem, council.Case, async (tx) => {
      const c = await this.lock(tx, postId);
      if (!c || c.status !== "implementing")
        throw new ApsError(
          "invalid_state",
          `completion needs a proposal being implemented; this one is ${c?.status ?? "not before the Council"}`,
        );
      await tx.query("UPDATE cases SET status = 'completed' WHERE post_id = $1", [postId]);
      await this.transition(tx, postId, "completed", now, chiefId);
      await this.outbox.publish(tx, "council.implementation_completed", {
        occurredAt: now.toISOString(),
        postId,
        by: chiefId,
        authorId: c.author_id,
      });
      return this.summarize(tx, postId, now);
    });
  }

  /**
   * Whether `postId` has a case: one primary-key read, where `find` reads the case and its five
   * child tables (the handlers' not_found-before-invalid_state checks need only this).
   */
  async hasCase(postId: string, q: Queryable = this.pool): Promise<boolean> {
    return (await q.query("SELECT 1 FROM cases WHERE post_id = $1", [postId])).rowCount === 1;
  }

  /** The case of `postId`, or undefined; read through `q` (a transaction sees its own writes). */
  async find(postId: string, q: Queryable = this.pool): Promise<council.Case | undefined> {
    const r = await q.query<CaseRow>("SELECT * FROM cases WHERE post_id = $1", [postId]);
    if (!r.rows[0]) return undefined;
    return (await this.hydrate(r.rows, q))[0];
  }

  /** The case of `postId`; throws `not_found`. */
  async get(postId: string, q: Queryable = this.pool): Promise<council.Case> {
    const c = await this.find(postId, q);
    if (!c) throw new ApsError("not_found", `no Council case for ${postId}`);
    return c;
  }

  /** Cases in `statuses`, oldest opened first, keyset-paginated by (opened_at, post_id). */
  async list(statuses: string[], limit: number, cursor: string): Promise<council.ListCasesResponse> {
    const after = cursor ? decodeTupleCursor(cursor, 2, [PG_TIMESTAMPTZ_TEXT]) : ["-infinity", ""];
    const r = await this.pool.query<CaseRow & { opened_text: string }>(
      `SELECT *, opened_at::text AS opened_text FROM cases WHERE status = ANY($1::text[]) AND (opened_at, post_id) > ($2::timestamptz, $3)
       ORDER BY opened_at, post_id LIMIT $4`,
      [statuses, after[0], after[1], limit + 1],
    );
    return this.page(r.rows, limit, (last) => [last.opened_text, last.post_id]);
  }

  /**
   * Closed cases in `statuses`, newest closed first, keyset-paginated by (closed_at, post_id)
   * descending over the `cases_recently_closed` index: the decisions feed
   * (docs/design/agents.md#atom-feeds). The gateway names the list in its cursors, so a cursor of
   * `list` never reaches here; the shape alone is checked (`invalid_request`).
   */
  async listRecentlyClosed(statuses: string[], limit: number, cursor: string): Promise<council.ListCasesResponse> {
    const before = cursor ? decodeTupleCursor(cursor, 2, [PG_TIMESTAMPTZ_TEXT]) : undefined;
    const r = await this.pool.query<CaseRow & { closed_text: string }>(
      `SELECT *, closed_at::text AS closed_text FROM cases
        WHERE closed_at IS NOT NULL AND status = ANY($1::text[])
          AND ($3::timestamptz IS NULL OR (closed_at, post_id) < ($3::timestamptz, $4))
        ORDER BY closed_at DESC, post_id DESC LIMIT $2`,
      [statuses, limit + 1, before?.[0] ?? null, before?.[1] ?? ""],
    );
    return this.page(r.rows, limit, (last) => [last.closed_text, last.post_id]);
  }

  /** A page of at most `limit` of `rows` (fetched with one more), hydrated, and the cursor of its last row's `key`. */
  private async page<R extends CaseRow>(
    rows: R[],
    limit: number,
    key: (last: R) => string[],
  ): Promise<council.ListCasesResponse> {
    const more = rows.length > limit;
    const kept = more ? rows.slice(0, limit) : rows;
    const last = kept[kept.length - 1];
    return { items: await this.hydrate(kept), nextCursor: more && last ? encodeTupleCursor(key(last)) : "" };
  }

  private async hydrate(rows: CaseRow[], q: Queryable = this.pool): Promise<council.Case[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.post_id);
    const [b, t, extra, links] = await Promise.all([
      q.query<{ post_id: string; councillor_id: string; vote: string; reason: string; cast_at: Date }>(
        "SELECT * FROM ballots WHERE post_id = ANY($1::text[]) ORDER BY cast_at, councillor_id",
        [ids],
      ),
      q.query<{ post_id: string; status: string; at: Date; by: string; open_concerns: string[] }>(
        "SELECT * FROM transitions WHERE post_id = ANY($1::text[]) ORDER BY seq",
        [ids],
      ),
      loadConcernsAndProgress(q, ids),
      q.query<{ post_id: string; type: string; target_id: string }>(
        "SELECT post_id, type, target_id FROM proposal_links WHERE post_id = ANY($1::text[]) ORDER BY type, target_id",
        [ids],
      ),
    ]);
    return rows.map((r) => ({
      postId: r.post_id,
      authorId: r.author_id,
      status: r.status,
      seats: r.seats,
      openedAt: r.opened_at.toISOString(),
      deadline: r.deadline.toISOString(),
      closedAt: r.closed_at?.toISOString() ?? "",
      approvals: r.approvals,
      rejections: r.rejections,
      abstentions: r.abstentions,
      recusals: r.recusals,
      approvingOwners: r.approving_owners,
      minOwners: r.min_owners,
      revision: Number(r.revision),
      sealing: r.sealing,
      decidedBy: r.decided_by ?? "",
      links: links.rows.filter((l) => l.post_id === r.post_id).map((l) => ({ type: l.type, postId: l.target_id })),
      supersededBy: r.superseded_by ?? "",
      decision:
        r.decision_statement !== null && r.decision_at
          ? {
              statement: r.decision_statement,
              by: r.decision_by ?? "",
              at: r.decision_at.toISOString(),
              reviewAt: r.review_at?.toISOString() ?? "",
            }
          : undefined,
      withdrawnReason: r.withdrawn_reason ?? "",
      lastCall:
        r.last_call_outcome && r.last_call_started && r.last_call_ends && lastCallShown(r.status, r.last_call_outcome)
          ? {
              outcome: r.last_call_outcome,
              startedAt: r.last_call_started.toISOString(),
              endsAt: r.last_call_ends.toISOString(),
            }
          : undefined,
      ballots: b.rows
        .filter((x) => x.post_id === r.post_id)
        .map((x) => ({
          councillorId: x.councillor_id,
          vote: x.vote,
          reason: x.reason,
          castAt: x.cast_at.toISOString(),
        })),
      handoff: r.handoff_at
        ? {
            implementation: r.handoff_implementation ?? "",
            executor: r.handoff_executor ?? "",
            at: r.handoff_at.toISOString(),
            by: r.handoff_by ?? "",
          }
        : undefined,
      timeline: t.rows
        .filter((x) => x.post_id === r.post_id)
        .map((x) => ({ status: x.status, at: x.at.toISOString(), by: x.by, openConcerns: x.open_concerns })),
      concerns: extra.concerns.get(r.post_id) ?? [],
      progress: extra.progress.get(r.post_id) ?? [],
      duplicateOf: r.duplicate_of ?? "",
    }));
  }

  /**
   * Ends a change of case `postId` in `tx` (the case row locked by the change): its revision
   * grows by one and `council.case_summary` carries the case as it now stands, with that revision,
   * through the outbox, so the forum's projection follows every committed change and no other
   * (docs/design/council.md#the-forums-projection-of-the-case decision 3). Call once per transaction that changed the case, after its
   * last write; returns the case (with the new revision), which the write answers.
   */
  async summarize(tx: Tx, postId: string, now: Date): Promise<council.Case> {
    await tx.query("UPDATE cases SET revision = revision + 1 WHERE post_id = $1", [postId]);
    const c = await this.get(postId, tx);
    await this.outbox.publish(tx, "council.case_summary", {
      occurredAt: now.toISOString(),
      postId,
      revision: c.revision,
      case: c,
      authorId: c.authorId,
    });
    return c;
  }

  /**
   * The upgrade's backfill (docs/design/council.md#the-forums-projection-of-the-case): publishes the first summary of every case written
   * before case revisions existed (revision 0, index cases_unsummarized), `batch` cases per
   * transaction, locked with SKIP LOCKED so replicas starting together share the work and a
   * change racing it simply summarizes first. Resumable; a no-op (one empty index read) once done.
   * Returns how many cases it summarized.
   */
  async summarizeUnsummarized(batch = 100): Promise<number> {
    let done = 0;
    for (;;) {
      const n = await withTransaction(this.pool, async (tx) => {
        const r = await tx.query<{ post_id: string }>(
          "SELECT post_id FROM cases WHERE revision = 0 ORDER BY post_id LIMIT $1 FOR UPDATE SKIP LOCKED",
          [batch],
        );
        const now = this.clock.now();
        for (const { post_id } of r.rows) await this.summarize(tx, post_id, now);
        return r.rows.length;
      });
      done += n;
      if (n < batch) return done;
    }
  }

  /** The case row of `postId` locked FOR UPDATE in `tx`, or undefined. */
  async lock(tx: Tx, postId: string): Promise<CaseRow | undefined> {
    const r = await tx.query<CaseRow>("SELECT * FROM cases WHERE post_id = $1 FOR UPDATE", [postId]);
    return r.rows[0];
  }

  /** Records a status change of `postId` (its timeline), with the concerns open at a close. */
  async transition(
    tx: Tx,
    postId: string,
    status: string,
    at: Date,
    by: string,
    openConcerns: string[] = [],
  ): Promise<void> {
    await tx.query("INSERT INTO transitions (post_id, status, at, by, open_concerns) VALUES ($1, $2, $3, $4, $5)", [
      postId,
      status,
      at,
      by,
      openConcerns,
    ]);
  }
}
