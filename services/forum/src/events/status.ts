import { consumeEvents, processOnce, type EventBus, type Subscription } from "@aps/platform";
import type pg from "pg";
import type { ForumRepository } from "../store/repository.js";
import { projectDuplicate } from "../store/duplicates.js";

/**
 * The forum's status projection (docs/design/events.md#path-of-an-event): council events set `posts.status` so lists and
 * filters show the lifecycle. Exactly once per event (processed_events in the same transaction);
 * the projection never moves a status backwards, so late or replayed events change nothing.
 * The forum never takes back what it decided and published itself (docs/design/events.md#outbox): an `agenda`
 * case is opened by the council only from the forum's own `forum.post_on_agenda` (or, first, for a
 * post the forum already shows on the agenda), whose status the vote's transaction already wrote,
 * so its `council.case_opened` is acknowledged without a transaction. A `review` case (a
 * nomination) and every later status are the council's decisions and are projected.
 */
export function consumeCouncilEvents(bus: EventBus, pool: pg.Pool, repo: ForumRepository): Promise<Subscription> {
  const project = (eventId: string, postId: string, status: string, at: string, reason = "") =>
    processOnce(pool, "forum-status", eventId, async (tx) => {
      await repo.projectStatus(tx, postId, status, new Date(at), reason);
    }).then(() => undefined);
  return consumeEvents(bus, {
    durable: "forum-status",
    handlers: {
      "council.case_opened": async (m) => {
        if (m.status === "agenda") return; // the forum's own decision, echoed (heat rule, docs/design/votes-and-heat.md#the-agenda-rule)
        await project(m.eventId, m.postId, m.status, m.occurredAt);
      },
      "council.case_closed": (m) => project(m.eventId, m.postId, m.outcome, m.occurredAt, m.reason),
      "council.handoff_recorded": (m) => project(m.eventId, m.postId, "implementing", m.occurredAt),
      "council.implementation_completed": (m) => project(m.eventId, m.postId, "completed", m.occurredAt),
      // a later adopted proposal superseded or replaced it (docs/reference/council.md "Links")
      "council.case_superseded": (m) => project(m.eventId, m.postId, "superseded", m.occurredAt),
      // A duplicate close (docs/design/council.md#duplicates): the status, which original, and the original's count.
      "council.post_duplicated": (m) =>
        processOnce(pool, "forum-status", m.eventId, async (tx) => {
          await projectDuplicate(tx, m.postId, m.duplicateOf, new Date(m.occurredAt));
        }).then(() => undefined),
    },
  });
}

/**
 * The forum's projection of each post's Council case (docs/design/council.md#the-forums-projection-of-the-case decision 3): every
 * `council.case_summary` is stored when its revision is newer than the post's stored one, so
 * replays and out-of-order deliveries change nothing (no processed_events row: the revision is the
 * guard). Its own durable, `forum-case-projection`, so a slow status projection never holds it.
 */
export function consumeCaseSummaries(bus: EventBus, repo: ForumRepository): Promise<Subscription> {
  return consumeEvents(bus, {
    durable: "forum-case-projection",
    handlers: {
      "council.case_summary": async (m) => {
        if (m.case && m.revision > 0) await repo.cases.store({ ...m.case, revision: m.revision });
      },
    },
  });
}
