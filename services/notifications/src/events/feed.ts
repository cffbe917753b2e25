import type pg from "pg";
import {
  consumeEvents,
  GroupCommit,
  processOnce,
  type EventBus,
  type EventHandlers,
  type EventMessage,
  type EventType,
  type Logger,
  type Subscription,
} from "@aps/platform";
import {
  FEED_LOCK,
  ingest,
  recordParticipation,
  recordParticipations,
  type IngestFanout,
  type Participation,
} from "../store/feed.js";
import { DEFAULT_FANOUT_PAGE } from "../store/fanout.js";
import { applyModeration } from "../store/hidden.js";
import { DEFAULT_WATCH_LIMITS } from "../store/watches.js";
import { PARTICIPATION_RULES, PUBLIC_EVENT_RULES } from "./public-events.js";

/** Durable consumer name of the feed (one per purpose, docs/design/events.md#path-of-an-event). */
export const FEED_CONSUMER = "notifications-feed";

/**
 * How long an event whose post's author is still unknown is retried before it is stored without
 * that author's inbox item: events of one post may arrive out of order (one JetStream consumer per
 * subject), and the post's own `forum.post_created` normally follows within seconds.
 */
export const AUTHOR_WAIT_MS = 60_000;

/**
 * `forum.vote_cast` events handled at once (docs/design/events.md#consumers): their participation-only INSERTs are
 * then written together by one group commit, and the few that cross a milestone run their own
 * processed-once transactions side by side (each is about its own post and announced once).
 */
export const VOTE_CONCURRENCY = 32;

/** Most participations written by one statement of the group commit. */
const PARTICIPATION_BATCH = 256;

/**
 * Consumes every internal event the public feed derives from (PUBLIC_EVENT_RULES,
 * PARTICIPATION_RULES) with one durable consumer: each event's public events, inbox items,
 * webhook deliveries and participation are written in one transaction, exactly once per event
 * (`processed_events`, docs/design/events.md#path-of-an-event) — a restart or redelivery duplicates nothing. An
 * event that stores no public event and only records participation (most votes) is one idempotent
 * INSERT instead, with no transaction and no processed_events row (docs/design/votes-and-heat.md#what-a-vote-costs), written together
 * with the others handled at once: `forum.vote_cast` is handled VOTE_CONCURRENCY at a time (docs/design/events.md#consumers).
 * `forum.post_moderated` is consumed too: hiding a post or comment redacts what the feed and the
 * pending deliveries say of it (store/hidden.ts, docs/design/notifications.md#redaction-of-hidden-content).
 * `wake` is the delivery worker's, called after a commit that queued deliveries.
 * `watchFanoutMax` is WATCH_FANOUT_MAX: watchers of one post an event reaches (docs/design/notifications.md#watch-levels).
 * `fanout`: an audience larger than `fanout.page` is queued for the paged fan-out, whose worker
 * `fanout.wake` wakes after the commit (docs/design/notifications.md#paged-inbox-fan-out).
 */
export function consumeFeed(
  bus: EventBus,
  pool: pg.Pool,
  wake: () => void,
  log: Logger,
  now: () => number = Date.now,
  watchFanoutMax: number = DEFAULT_WATCH_LIMITS.fanoutMax,
  fanout: IngestFanout = { page: DEFAULT_FANOUT_PAGE, wake: () => {} },
): Promise<Subscription> {
  // the participation-only events handled at once are written together (docs/design/events.md#consumers)
  const participations = new GroupCommit<Participation, void>(
    (ps) => recordParticipations(pool, ps).then(() => ps.map(() => undefined)),
    (p) => recordParticipation(pool, p),
    PARTICIPATION_BATCH,
  );
  const types = new Set([...Object.keys(PUBLIC_EVENT_RULES), ...Object.keys(PARTICIPATION_RULES)] as EventType[]);
  const handlers: EventHandlers = {};
  for (const type of types) {
    const handler = async (m: EventMessage<EventType>) => {
      const rule = PUBLIC_EVENT_RULES[type] as
        ((x: typeof m) => ReturnType<NonNullable<(typeof PUBLIC_EVENT_RULES)["forum.post_created"]>>) | undefined;
      const part = PARTICIPATION_RULES[type] as
        ((x: typeof m) => { postId: string; agentId: string; role: string }) | undefined;
      const source = { eventId: m.eventId, occurredAt: m.occurredAt };
      const publicEvents = rule ? rule(m) : [];
      const participation = part?.(m);
      if (publicEvents.length === 0) {
        // Participation only (a vote that crosses no milestone: nearly every vote): one idempotent
        // INSERT, no transaction and no processed_events row — a redelivery writes the same row
        // again, i.e. nothing (docs/design/votes-and-heat.md#what-a-vote-costs).
        if (participation) await participations.submit(participation);
        return;
      }
      const waitForAuthor = now() - Date.parse(m.occurredAt) < AUTHOR_WAIT_MS;
      await processOnce(pool, FEED_CONSUMER, m.eventId, async (tx) => {
        const r = await ingest(tx, source, publicEvents, participation, wake, watchFanoutMax, fanout);
        // Throwing rolls the whole event back: it is delivered again (docs/design/events.md#redelivery).
        if (r.authorUnknown && waitForAuthor)
          throw new Error(`author of the post of ${type} ${m.eventId} not known yet`);
        if (r.authorUnknown)
          log.warn({ type, eventId: m.eventId }, "post author unknown; stored without the author's inbox item");
      });
    };
    (handlers as Record<string, unknown>)[type] = handler;
  }
  // Hidden means hidden (docs/design/notifications.md#redaction-of-hidden-content): a hide redacts the stored feed rows and
  // pending deliveries about its post or comment, under the feed lock that ingest holds too.
  handlers["forum.post_moderated"] = async (m) => {
    await processOnce(pool, FEED_CONSUMER, m.eventId, async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [FEED_LOCK]);
      const r = await applyModeration(tx, m);
      if (r.feedRows > 0)
        log.info({ postId: m.postId, commentId: m.commentId, ...r }, "hidden content redacted in the feed");
    });
  };
  return consumeEvents(bus, {
    durable: FEED_CONSUMER,
    handlers,
    concurrency: { "forum.vote_cast": VOTE_CONCURRENCY },
  });
}
