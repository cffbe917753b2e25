import type { EventBus, IdentityClient, Subscription } from "@aps/platform";
import { events } from "@aps/proto";
import type { CouncilRepository } from "../store/repository.js";

/**
 * Opens an `agenda` case for every `forum.post_on_agenda` (the heat rule fired in the forum),
 * with the councillors seated at that moment. Idempotent per event and per post.
 */
export function consumeAgenda(bus: EventBus, repo: CouncilRepository, identity: IdentityClient): Promise<Subscription> {
  return bus.consume({
    durable: "council-agenda",
    subjects: [`${bus.prefix}.forum.post_on_agenda`],
    handler: async (e) => {
      const m = events.PostOnAgenda.decode(e.payload);
      const seats = await identity.countSeats("councillor");
      await repo.openFromAgenda(m.eventId, m.postId, m.authorId, seats);
    },
  });
}
