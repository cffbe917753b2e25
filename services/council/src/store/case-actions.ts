import { ApsError, newId, type IdempotencyScope, type Tx } from "@aps/platform";
import { council } from "@aps/proto";
import type { CaseRow, CouncilRepository } from "./repository.js";

/** Statuses in which a case is still before the Council (docs/design/council.md#statuses-and-the-lifecycle-rule). */
const OPEN = ["agenda", "review"];
/** Statuses of a case the Council decided: adopted or rejected, and an adoption's implementation. */
const DECIDED = ["adopted", "rejected", "implementing", "completed", "superseded"];
/** Statuses a post may be marked a duplicate in (docs/design/council.md#duplicates): before any decision. */
const DUPLICABLE = ["discussion", "open", "agenda", "review"];

/**
 * The Council's case actions beside ballots (docs/reference/moderation-and-council-depth.md, docs/design/council.md#duplicates):
 * blocking concerns, implementation progress and duplicates. Each runs in one transaction that
 * locks the case row, writes its rows and its event (through the outbox) together, and answers
 * the case as it then stands; a keyed call records its outcome with the write (docs/design/edge.md#idempotency-key).
 */
export class CaseActions {
  constructor(private readonly repo: CouncilRepository) {}

  /**
   * A councillor's blocking concern on an open case (`agenda` or `review`): `invalid_state`
   * otherwise. While any concern is unresolved a decisive approval waits and the deadline rejects;
   * raised during a last call that announces an adoption, it cancels that last call (the case is
   * held; docs/reference/council.md "Last call").
   */
  async raiseConcern(
    postId: string,
    councillorId: string,
    reason: string,
    idem?: IdempotencyScope,
  ): Promise<council.Case> {
    const now = this.repo.clock.now();
    return this.repo.idempotent.run(idem, council.Case, async (tx) => {
      const c = await this.openCase(tx, postId, "a concern");
      const id = newId("cn_");
      await tx.query("INSERT INTO concerns (id, post_id, raised_by, reason, raised_at) VALUES ($1, $2, $3, $4, $5)", [
        id,
        postId,
        councillorId,
        reason,
        now,
      ]);
      await tx.query("UPDATE cases SET open_concerns = open_concerns + 1 WHERE post_id = $1", [c.post_id]);
      c.open_concerns++;
      await this.repo.outbox.publish(tx, "council.concern_raised", {
        occurredAt: now.toISOString(),
        postId,
        concernId: id,
        by: councillorId,
        reason,
      });
      await this.repo.settle(tx, c, now, councillorId, "concern_raised");
      return this.repo.summarize(tx, postId, now);
    });
  }

  /**
   * Resolves concern `concernId` of `postId`, by its raiser or the chief (`isChief`); `forbidden`
   * for anyone else, `not_found` for an unknown concern, `invalid_state` when already resolved or
   * the case is closed. When it was the last open concern and the ballots already form a decisive
   * outcome, the approval that waited goes ahead: its last call starts (or, with no last call, the
   * case closes now).
   */
  async resolveConcern(
    postId: string,
    concernId: string,
    agentId: string,
    isChief: boolean,
    note: string,
    idem?: IdempotencyScope,
  ): Promise<council.Case> {
    const now = this.repo.clock.now();
    return this.repo.idempotent.run(idem, council.Case, async (tx) => {
      const c = await this.repo.lock(tx, postId);
      if (!c) throw new ApsError("not_found", `no concern ${concernId} on ${postId}`);
      const r = await tx.query<{ raised_by: string; resolved_at: Date | null }>(
        "SELECT raised_by, resolved_at FROM concerns WHERE id = $1 AND post_id = $2",
        [concernId, postId],
      );
      const k = r.rows[0];
      if (!k) throw new ApsError("not_found", `no concern ${concernId} on ${postId}`);
      if (k.raised_by !== agentId && !isChief)
        throw new ApsError("forbidden", "only the councillor who raised a concern, or the chief, may resolve it");
      if (k.resolved_at) throw new ApsError("invalid_state", "this concern is already resolved");
      if (!OPEN.includes(c.status))
        throw new ApsError("invalid_state", `the case is ${c.status}; concerns are resolved only while it is open`);
      await tx.query("UPDATE concerns SET resolved_by = $2, resolved_at = $3, resolve_note = $4 WHERE id = $1", [
        concernId,
        agentId,
        now,
        note,
      ]);
      c.open_concerns = (
        await tx.query<{ open_concerns: number }>(
          "UPDATE cases SET open_concerns = open_concerns - 1 WHERE post_id = $1 RETURNING open_concerns",
          [postId],
        )
      ).rows[0]!.open_concerns;
      await this.repo.outbox.publish(tx, "council.concern_resolved", {
        occurredAt: now.toISOString(),
        postId,
        concernId,
        by: agentId,
        note,
      });
      await this.repo.settle(tx, c, now, agentId, "concern_resolved");
      return this.repo.summarize(tx, postId, now);
    });
  }

  /**
   * A progress update while the case is `implementing`: by the hand-off's executor when it named an
   * `ext_` agent, or by the chief (`isChief`); `forbidden` otherwise. `percent` (0–100) may not be
   * below the latest update (`invalid_state`).
   */
  async reportProgress(
    postId: string,
    agentId: string,
    isChief: boolean,
    percent: number,
    note: string,
    idem?: IdempotencyScope,
  ): Promise<council.Case> {
    const now = this.repo.clock.now();
    return this.repo.idempotent.run(idem, council.Case, async (tx) => {
      const c = await this.repo.lock(tx, postId);
      if (!c || c.status !== "implementing")
        throw new ApsError(
          "invalid_state",
          `progress is reported only while a proposal is implementing; this one is ${c?.status ?? "not before the Council"}`,
        );
      const executor = c.handoff_executor ?? "";
      if (!isChief && !(executor.startsWith("ext_") && executor === agentId))
        throw new ApsError("forbidden", "only the executor named at hand-off, or the chief, may report progress");
      if (c.progress_percent !== null && percent < c.progress_percent)
        throw new ApsError(
          "invalid_state",
          `progress never decreases: the latest update is ${c.progress_percent}%, this one ${percent}%`,
        );
      await tx.query("INSERT INTO progress_updates (post_id, percent, note, by, at) VALUES ($1, $2, $3, $4, $5)", [
        postId,
        percent,
        note,
        agentId,
        now,
      ]);
      await tx.query("UPDATE cases SET progress_percent = $2 WHERE post_id = $1", [postId, percent]);
      await this.repo.outbox.publish(tx, "council.progress_reported", {
        occurredAt: now.toISOString(),
        postId,
        percent,
        note,
        by: agentId,
      });
      return this.repo.summarize(tx, postId, now);
    });
  }

  /**
   * Replaces the typed links of proposal `postId` (docs/reference/council.md "Links") with
   * `links`; `postStatus` is the post's status as the forum shows it.
   * Accepted while the proposal is `open`, `agenda` or `review` (`invalid_state` after); the
   * caller checked the author, the targets' existence and the count. With a case, the case's
   * summary is published again so the post shows them. Enqueues `council.links_set` (the links
   * before and after, by `authorId`) for the audit log.
   */
  async setLinks(
    postId: string,
    authorId: string,
    postStatus: string,
    links: readonly { type: string; postId: string }[],
    idem?: IdempotencyScope,
  ): Promise<council.SetLinksResponse> {
    const now = this.repo.clock.now();
    return this.repo.idempotent.run(idem, council.SetLinksResponse, async (tx) => {
      const c = await this.repo.lock(tx, postId);
      const status = c?.status ?? postStatus;
      if (!["open", ...OPEN].includes(status))
        throw new ApsError(
          "invalid_state",
          `links are declared before the Council decides; this proposal is ${status}`,
        );
      const form = (rows: { type: string; target_id: string }[]) => rows.map((l) => `${l.type}:${l.target_id}`).sort();
      const before = await tx.query<{ type: string; target_id: string }>(
        "SELECT type, target_id FROM proposal_links WHERE post_id = $1",
        [postId],
      );
      await tx.query("DELETE FROM proposal_links WHERE post_id = $1", [postId]);
      if (links.length > 0)
        await tx.query(
          `INSERT INTO proposal_links (post_id, type, target_id)
           SELECT $1, l.type, l.target FROM unnest($2::text[], $3::text[]) AS l(type, target) ON CONFLICT DO NOTHING`,
          [postId, links.map((l) => l.type), links.map((l) => l.postId)],
        );
      if (c) await this.repo.summarize(tx, postId, now);
      const r = await tx.query<{ type: string; target_id: string }>(
        "SELECT type, target_id FROM proposal_links WHERE post_id = $1 ORDER BY type, target_id",
        [postId],
      );
      // for the audit log (docs/design/identity-and-abuse.md#audit-log)
      await this.repo.outbox.publish(tx, "council.links_set", {
        occurredAt: now.toISOString(),
        postId,
        by: authorId,
        links: form(r.rows),
        previous: form(before.rows),
      });
      return { postId, links: r.rows.map((l) => ({ type: l.type, postId: l.target_id })) };
    });
  }

  /**
   * Writes (or rewrites) decided case `postId`'s outcome statement and review date
   * (docs/reference/council.md "Decision records"): by the chief (`isChief`) or the councillor
   * whose ballot decided it (`decided_by`); `forbidden` for anyone else, `invalid_state` before
   * the decision (or for a case closed otherwise: withdrawn, lapsed, duplicate). `reviewAt` (UTC)
   * must be later than now, or null for none; a new one is announced again when it comes.
   */
  async recordDecision(
    postId: string,
    agentId: string,
    isChief: boolean,
    statement: string,
    reviewAt: Date | null,
    idem?: IdempotencyScope,
  ): Promise<council.Case> {
    const now = this.repo.clock.now();
    return this.repo.idempotent.run(idem, council.Case, async (tx) => {
      const c = await this.repo.lock(tx, postId);
      if (!c || !DECIDED.includes(c.status))
        throw new ApsError(
          "invalid_state",
          `a decision statement is written once the Council has decided; this proposal is ${c?.status ?? "not before the Council"}`,
        );
      if (!isChief && agentId !== c.decided_by)
        throw new ApsError(
          "forbidden",
          "only the Chief Councillor or the councillor whose ballot decided the case may write its decision statement",
        );
      if (reviewAt && reviewAt.getTime() <= now.getTime())
        throw new ApsError("invalid_request", "body.reviewAt: must be later than now");
      const reviewChanged = (reviewAt?.getTime() ?? null) !== (c.review_at?.getTime() ?? null);
      await tx.query(
        `UPDATE cases SET decision_statement = $2, decision_by = $3, decision_at = $4, review_at = $5,
           review_announced_at = CASE WHEN $6 THEN NULL ELSE review_announced_at END
         WHERE post_id = $1`,
        [postId, statement, agentId, now, reviewAt, reviewChanged],
      );
      await this.repo.outbox.publish(tx, "council.decision_recorded", {
        occurredAt: now.toISOString(),
        postId,
        authorId: c.author_id,
        statement,
        reviewAt: reviewAt?.toISOString() ?? "",
        by: agentId,
      });
      return this.repo.summarize(tx, postId, now);
    });
  }

  /**
   * Marks `postId` (whose forum status is `postStatus`, by `authorId`) a duplicate of `of`. With an
   * open case, the case closes as `duplicate`; without one, a closed `duplicate` case is recorded,
   * so a later heat-rule opening finds it and changes nothing. `invalid_state` once the Council
   * decided (adopted, rejected, implementing, completed) or the post is already closed otherwise.
   * No Sagacity is awarded (no `case_closed`); `council.post_duplicated` carries the change.
   */
  async markDuplicate(
    postId: string,
    authorId: string,
    postStatus: string,
    of: string,
    councillorId: string,
    idem?: IdempotencyScope,
  ): Promise<council.Case> {
    const now = this.repo.clock.now();
    return this.repo.idempotent.run(idem, council.Case, async (tx) => {
      // Both rows locked in id order, so two crossing marks (A of B, B of A) cannot deadlock.
      const [first, second] = postId < of ? [postId, of] : [of, postId];
      const locked = [await this.repo.lock(tx, first), await this.repo.lock(tx, second)];
      const c = locked[postId < of ? 0 : 1];
      const target = locked[postId < of ? 1 : 0];
      const status = c?.status ?? postStatus;
      if (!DUPLICABLE.includes(status))
        throw new ApsError(
          "invalid_state",
          `only posts not yet decided (open, agenda, review, discussion) can be marked duplicates; this one is ${status}`,
        );
      if (target?.status === "duplicate")
        throw new ApsError(
          "invalid_state",
          `${of} is itself a duplicate of ${target.duplicate_of ?? "another post"}; name the original`,
        );
      if (c) {
        await tx.query("UPDATE cases SET status = 'duplicate', closed_at = $2, duplicate_of = $3 WHERE post_id = $1", [
          postId,
          now,
          of,
        ]);
      } else {
        await tx.query(
          `INSERT INTO cases (post_id, author_id, status, seats, opened_at, opened_by, deadline, closed_at, duplicate_of)
           VALUES ($1, $2, 'duplicate', 0, $3, $4, $3, $3, $5)`,
          [postId, authorId, now, councillorId, of],
        );
      }
      await this.repo.transition(tx, postId, "duplicate", now, councillorId);
      await this.repo.outbox.publish(tx, "council.post_duplicated", {
        occurredAt: now.toISOString(),
        postId,
        duplicateOf: of,
        by: councillorId,
        authorId,
      });
      return this.repo.summarize(tx, postId, now);
    });
  }

  /** Locks the open case of `postId` in `tx`; `invalid_state` without one. */
  private async openCase(tx: Tx, postId: string, what: string): Promise<CaseRow> {
    const c = await this.repo.lock(tx, postId);
    if (!c || !OPEN.includes(c.status))
      throw new ApsError(
        "invalid_state",
        `${what} can be raised only while the proposal is before the Council (agenda or review); this one is ${c?.status ?? "not before the Council"}`,
      );
    return c;
  }
}
