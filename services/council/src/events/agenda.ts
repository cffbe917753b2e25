import { consumeEvents, type EventBus, type IdentityClient, type Subscription } from "@aps/platform";
import type { CouncilRepository } from "../store/repository.js";

/**
 * Opens an `agenda` case for every `forum.post_on_agenda` (the heat rule fired in the forum),
 * with the councillors seated at that moment. Idempotent per event and per post. Also closes a
 * case opened concurrently with a `forum.post_withdrawn` as withdrawn (docs/adr/0129).
 */
export function consumeAgenda(bus: EventBus, repo: CouncilRepository, identity: IdentityClient): Promise<Subscription> {
  return consumeEvents(bus, {
    durable: "council-agenda",
    handlers: {
      "forum.post_on_agenda": async (m) => {
        const seats = await identity.countSeats("councillor");
        await repo.openFromAgenda(m.eventId, m.postId, m.authorId, seats);
      },
      // A nomination that raced the author's withdrawal closes as withdrawn too (docs/adr/0129).
      "forum.post_withdrawn": (m) => repo.withdrawnInForum(m.eventId, m.postId, m.authorId, m.reason),
    },
  });
}
