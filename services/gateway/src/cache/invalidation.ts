import type { BusEvent, EventBus, Logger, Subscription } from "@aps/platform";
import { events } from "@aps/proto";
import type { AuthCache } from "./auth-cache.js";
import type { ReadCache } from "./read-cache.js";

/** Decoders of the forum and council events, by subject without the prefix; each names one post. */
const POST_EVENTS: Record<string, (payload: Uint8Array) => { postId: string }> = {
  "forum.post_created": (b) => events.PostCreated.decode(b),
  "forum.comment_created": (b) => events.CommentCreated.decode(b),
  "forum.vote_cast": (b) => events.VoteCast.decode(b),
  "forum.post_on_agenda": (b) => events.PostOnAgenda.decode(b),
  "council.case_opened": (b) => events.CaseOpened.decode(b),
  "council.ballot_cast": (b) => events.BallotCast.decode(b),
  "council.case_closed": (b) => events.CaseClosed.decode(b),
  "council.handoff_recorded": (b) => events.HandoffRecorded.decode(b),
  "council.implementation_completed": (b) => events.ImplementationCompleted.decode(b),
};

/**
 * Applies one event to the gateway's caches (docs/adr/0087, 0088): `identity.key_rotated` drops
 * the agent's cached authentications; `knowledge.post_indexed` drops the cached search results;
 * a forum or council event about a post drops that post's
 * detail and every collection; any other forum or council event (or one that does not decode)
 * drops every cached read. Returns what it did, for logs and tests.
 */
export function applyEvent(
  prefix: string,
  e: BusEvent,
  reads: ReadCache,
  auth: AuthCache,
): "key" | "post" | "search" | "all" | "ignored" {
  const type = e.subject.startsWith(`${prefix}.`) ? e.subject.slice(prefix.length + 1) : e.subject;
  if (type === "knowledge.post_indexed") {
    reads.invalidateSearch();
    return "search";
  }
  if (type === "identity.key_rotated") {
    let agentId = "";
    try {
      agentId = events.KeyRotated.decode(e.payload).agentId;
    } catch {
      agentId = "";
    }
    // A rotation the cache cannot attribute drops every cached key: never trust a revoked one.
    if (agentId) auth.dropAgent(agentId);
    else auth.dropAll();
    return "key";
  }
  if (!type.startsWith("forum.") && !type.startsWith("council.")) return "ignored";
  const decode = POST_EVENTS[type];
  let postId = "";
  try {
    postId = decode ? decode(e.payload).postId : "";
  } catch {
    postId = "";
  }
  if (postId) {
    reads.invalidatePost(postId);
    return "post";
  }
  reads.invalidateAll();
  return "all";
}

/**
 * Subscribes this gateway to the events that invalidate its caches: `<prefix>.forum.>`,
 * `<prefix>.council.>`, `<prefix>.identity.key_rotated` and `<prefix>.knowledge.post_indexed`, as
 * an ephemeral subscription
 * (EventBus.subscribe — no durable consumer per replica). Events missed while disconnected are
 * not replayed: the caches' TTLs bound what that costs.
 */
export function subscribeInvalidation(
  bus: EventBus,
  reads: ReadCache,
  auth: AuthCache,
  log: Logger,
): Promise<Subscription> {
  const p = bus.prefix;
  return bus.subscribe(
    [`${p}.forum.>`, `${p}.council.>`, `${p}.identity.key_rotated`, `${p}.knowledge.post_indexed`],
    (e) => {
      const what = applyEvent(p, e, reads, auth);
      if (what === "all") log.debug({ subject: e.subject }, "event not attributable to one post: read cache cleared");
    },
  );
}
