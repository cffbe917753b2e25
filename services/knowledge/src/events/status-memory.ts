import { LRUCache } from "lru-cache";
import { movesForward } from "@aps/platform";

/** Posts whose furthest status the knowledge service remembers (the most recently named ones). */
export const STATUS_MEMORY_POSTS = 100_000;

/**
 * The furthest status seen per post, for the index (docs/design/search-and-translation.md#search-engines, lifecycle rule of
 * docs/design/council.md#statuses-and-the-lifecycle-rule): a council event can arrive before the forum's own record of the post shows its
 * status, so the status an event names is remembered and a later read of the post that shows an
 * earlier one does not move the index back. Bounded: the last
 * `max` posts named are remembered, least recently named forgotten first — a status matters only
 * until the forum's record catches up, which takes moments, not the life of the process.
 * Returns `statusOf(postId, status)`: records `status` and answers the furthest one seen.
 */
export function statusMemory(max = STATUS_MEMORY_POSTS): (postId: string, status: string) => string {
  const seen = new LRUCache<string, string>({ max });
  return (postId, status) => {
    const known = seen.get(postId);
    const best = known !== undefined && !movesForward(known, status) ? known : status;
    seen.set(postId, best);
    return best;
  };
}
