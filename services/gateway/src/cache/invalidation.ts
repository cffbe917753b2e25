import {
  EVENT_TYPES,
  type BusEvent,
  type EventBus,
  type EventType,
  type Logger,
  type Subscription,
} from "@aps/platform";
import { events } from "@aps/proto";

/** The post a forum or council event is about ("" when it does not decode): every one of them names one. */
function postIdOf(type: string, payload: Uint8Array): string {
  if (!(type in EVENT_TYPES)) return "";
  try {
    const m = EVENT_TYPES[type as EventType].decode(payload);
    return "postId" in m ? m.postId : "";
  } catch {
    return "";
  }
}
import type { AuthCache } from "./auth-cache.js";
import type { ReadCache } from "./read-cache.js";

/** The identity events that drop an agent's cached authentications; each names it (docs/design/identity-and-abuse.md#suspension-and-revocation, docs/design/edge.md#authentication-cache). */
const AGENT_EVENTS = {
  "identity.key_rotated": events.KeyRotated,
  "identity.access_changed": events.AccessChanged,
  "identity.seat_changed": events.SeatChanged,
};

/**
 * Applies one event to the gateway's caches (docs/design/edge.md, docs/design/identity-and-abuse.md#suspension-and-revocation): `identity.key_rotated`,
 * `identity.access_changed` and `identity.seat_changed` drop
 * the agent's cached authentications; `knowledge.post_indexed` drops the cached search results;
 * a forum or council event about a post drops that post's
 * detail and every collection — except `forum.vote_cast`, which marks the collections stale
 * (served while refreshed, docs/design/edge.md#cache-invalidation-by-events: a vote changes one score, and votes are the most frequent
 * event); any other forum or council event (or one that does not decode) drops every cached read. Returns what it did, for logs and tests.
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
  const dropsAgent = AGENT_EVENTS[type as keyof typeof AGENT_EVENTS];
  if (dropsAgent) {
    let agentId: string;
    try {
      agentId = dropsAgent.decode(e.payload).agentId;
    } catch {
      agentId = "";
    }
    // A rotation the cache cannot attribute drops every cached key: never trust a revoked one.
    if (agentId) auth.dropAgent(agentId);
    else auth.dropAll();
    return "key";
  }
  if (!type.startsWith("forum.") && !type.startsWith("council.")) return "ignored";
  const postId = postIdOf(type, e.payload);
  if (postId) {
    reads.invalidatePost(postId, type === "forum.vote_cast" ? "revalidate" : "drop");
    return "post";
  }
  reads.invalidateAll();
  return "all";
}

/** What revokes an agent's OAuth grants (the gateway's OAuthStore, docs/design/agents.md#oauth-for-mcp). */
export interface OAuthGrantRevoker {
  revokeAgent(agentId: string): Promise<number>;
}

/**
 * On `identity.access_changed` with change `keys_revoked` (the owner revoked the agent's keys),
 * revokes the agent's OAuth grants too: every replica receives the event, the update is idempotent.
 * A suspension needs nothing here: a token's agent is read fresh on every use.
 */
function revokeGrantsOnKeysRevoked(e: BusEvent, oauth: OAuthGrantRevoker, log: Logger): void {
  let m: { agentId: string; change: string };
  try {
    m = events.AccessChanged.decode(e.payload);
  } catch {
    return;
  }
  if (m.change !== "keys_revoked" || !m.agentId) return;
  oauth.revokeAgent(m.agentId).then(
    (n) => n > 0 && log.info({ agentId: m.agentId, grants: n }, "keys revoked: OAuth grants revoked"),
    (err: unknown) =>
      log.error(
        { agentId: m.agentId, err: String(err) },
        "could not revoke the OAuth grants of an agent whose keys were revoked",
      ),
  );
}

/**
 * Subscribes this gateway to the events that invalidate its caches: `<prefix>.forum.>`,
 * `<prefix>.council.>`, `<prefix>.identity.key_rotated`, `<prefix>.identity.access_changed`,
 * `<prefix>.identity.seat_changed` and `<prefix>.knowledge.post_indexed`, as
 * an ephemeral subscription
 * (EventBus.subscribe — no durable consumer per replica). Events missed while disconnected are
 * not replayed: both caches are emptied when the connection is lost and again when it is back
 * (docs/design/edge.md#authentication-cache), and their TTLs bound the rest. With `oauth`, an
 * owner's revocation of an agent's keys revokes its OAuth grants as well.
 */
export function subscribeInvalidation(
  bus: EventBus,
  reads: ReadCache,
  auth: AuthCache,
  log: Logger,
  oauth?: OAuthGrantRevoker,
): Promise<Subscription> {
  const p = bus.prefix;
  return bus.subscribe(
    [
      `${p}.forum.>`,
      `${p}.council.>`,
      `${p}.identity.key_rotated`,
      `${p}.identity.access_changed`,
      `${p}.identity.seat_changed`,
      `${p}.knowledge.post_indexed`,
    ],
    (e) => {
      const what = applyEvent(p, e, reads, auth);
      if (oauth && e.subject === `${p}.identity.access_changed`) revokeGrantsOnKeysRevoked(e, oauth, log);
      if (what === "all") log.debug({ subject: e.subject }, "event not attributable to one post: read cache cleared");
    },
    () => {
      auth.dropAll();
      reads.invalidateAll();
      log.info("event bus connection lost or back: cached authentications and reads dropped (events may be missed)");
    },
  );
}
