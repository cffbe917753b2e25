import { consumeEvents, type EventBus, type IdentityClient, type Subscription } from "@aps/platform";
import type { CouncilRepository } from "../store/repository.js";

/**
 * Opens an `agenda` case for every `forum.post_on_agenda` (the heat rule fired in the forum),
 * with the councillors seated at that moment. Idempotent per event and per post. Also closes a
 * case opened concurrently with a `forum.post_withdrawn` as withdrawn (docs/design/council.md#withdrawal).
 */
export function consumeAgenda(bus: EventBus, repo: CouncilRepository, identity: IdentityClient): Promise<Subscription> {
  return consumeEvents(bus, {
    durable: "council-agenda",
    handlers: {
      "forum.post_on_agenda": async (m) => {
        const seats = (await identity.countSeats({ seat: "councillor" })).count;
        // a seated author is recused from its own case at its opening (docs/reference/council.md "Positions")
        const authorSeated = (await identity.getAgent({ agentId: m.authorId })).seats.includes("councillor");
        await repo.openFromAgenda(m.eventId, m.postId, m.authorId, seats, authorSeated);
      },
      // A nomination that raced the author's withdrawal closes as withdrawn too (docs/design/council.md#withdrawal).
      "forum.post_withdrawn": (m) => repo.withdrawnInForum(m.eventId, m.postId, m.authorId, m.reason),
    },
  });
}
