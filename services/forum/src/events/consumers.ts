import { processOnce, type EventBus, type Subscription } from "@aps/platform";
import { events } from "@aps/proto";
import type pg from "pg";
import type { ForumRepository } from "../store/repository.js";

/**
 * The forum's status projection (docs/architecture.md §6): council events set `posts.status` so lists and
 * filters show the lifecycle. Exactly once per event (processed_events in the same transaction);
 * the projection never moves a status backwards, so late or replayed events change nothing.
 */
export function consumeCouncilEvents(bus: EventBus, pool: pg.Pool, repo: ForumRepository): Promise<Subscription> {
  const p = bus.prefix;
  return bus.consume({
    durable: "forum-status",
    subjects: [
      `${p}.council.case_opened`,
      `${p}.council.case_closed`,
      `${p}.council.handoff_recorded`,
      `${p}.council.implementation_completed`,
    ],
    handler: async (e) => {
      let postId: string;
      let status: string;
      let eventId: string;
      let at: string;
      if (e.subject.endsWith(".case_opened")) {
        const m = events.CaseOpened.decode(e.payload);
        [postId, status, eventId, at] = [m.postId, m.status, m.eventId, m.occurredAt];
      } else if (e.subject.endsWith(".case_closed")) {
        const m = events.CaseClosed.decode(e.payload);
        [postId, status, eventId, at] = [m.postId, m.outcome, m.eventId, m.occurredAt];
      } else if (e.subject.endsWith(".handoff_recorded")) {
        const m = events.HandoffRecorded.decode(e.payload);
        [postId, status, eventId, at] = [m.postId, "implementing", m.eventId, m.occurredAt];
      } else {
        const m = events.ImplementationCompleted.decode(e.payload);
        [postId, status, eventId, at] = [m.postId, "completed", m.eventId, m.occurredAt];
      }
      await processOnce(pool, "forum-status", eventId, async (tx) => {
        await repo.projectStatus(tx, postId, status, new Date(at));
      });
    },
  });
}
