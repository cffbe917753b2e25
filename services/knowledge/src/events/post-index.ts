import {
  consumeEvents,
  encodeEvent,
  subjectOf,
  traceHeaders,
  type EventBus,
  type ForumClient,
  type Logger,
  type Subscription,
} from "@aps/platform";
import type { SearchEngine } from "../engine.js";
import { commentDocument, postDocument, withStatus } from "../sources.js";

/** What the post-index consumer works with. */
export interface PostIndexDeps {
  engine: SearchEngine;
  /** The forum, read by id when an event arrives (the index keeps no body). */
  forum: ForumClient;
  /** Records `status` for a post and returns the highest status seen for it (events may arrive before the forum's own projection). */
  statusOf: (postId: string, status: string) => string;
  log: Logger;
}

/**
 * The durable `knowledge-index` consumer (docs/design/search-and-translation.md#search-engines): keeps posts current in the
 * search index from `forum.post_created`, `forum.post_on_agenda`, `forum.post_moderated` (a hidden
 * post leaves the index, docs/design/identity-and-abuse.md#hiding-posts-and-comments), `forum.post_edited` (the new text and tags),
 * `forum.post_withdrawn` and the council's status events — the post is read from the forum by id
 * —, and comments from `forum.comment_created`, `forum.comment_edited` and `forum.post_moderated`
 * naming one (read by id; a hidden one leaves the index, docs/design/search-and-translation.md#comments-in-search)
 * (a status event only re-tags an indexed post where the engine can, docs/design/search-and-translation.md#keeping-the-index-current), and each
 * change is announced as `knowledge.post_indexed` for the gateways' search caches (docs/design/edge.md#read-cache-and-etags).
 * Up to 10 deliveries of an event.
 */
export function consumePostChanges(bus: EventBus, deps: PostIndexDeps): Promise<Subscription> {
  const { engine, forum, statusOf, log } = deps;
  /** Reads the post from the forum (the index keeps no body) and indexes it, or drops it when hidden; logged with `eventId`. */
  const indexPost = async (eventId: string, postId: string, status?: string) => {
    if (status) statusOf(postId, status);
    const p = (await forum.getPosts({ ids: [postId] })).items[0];
    if (!p) throw new Error(`post ${postId} not found in the forum yet`);
    // A post the owner hid leaves the index, whatever event mentions it (docs/design/identity-and-abuse.md#hiding-posts-and-comments).
    if (p.hiddenAt) await engine.remove([p.id], eventId);
    else await engine.upsert([postDocument(p, statusOf(p.id, p.status))], eventId);
    await announceIndexed(p.id);
  };
  /**
   * A status event (the agenda, the council's, a withdrawal): the indexed post's status tag moves
   * forward without reading the post again, where the engine can (docs/design/search-and-translation.md#keeping-the-index-current); a post not
   * indexed yet (or an engine without `retag`) is read from the forum and indexed in full.
   */
  const statusChanged = async (eventId: string, postId: string, status: string) => {
    const best = statusOf(postId, status);
    if (engine.retag && (await engine.retag(postId, (tags) => withStatus(tags, best), eventId))) {
      await announceIndexed(postId);
      return;
    }
    await indexPost(eventId, postId, status);
  };
  /**
   * Reads a comment from the forum by id and indexes it, or drops it when hidden (by the owner or
   * by flags): comments are documents of their own (docs/design/search-and-translation.md#comments-in-search).
   */
  const indexComment = async (eventId: string, commentId: string) => {
    const c = (await forum.getComments({ ids: [commentId] })).items[0];
    if (!c) throw new Error(`comment ${commentId} not found in the forum yet`);
    if (c.hiddenAt) await engine.remove([c.id], eventId);
    else await engine.upsert([commentDocument(c)], eventId);
    await announceIndexed(c.postId);
  };
  /** `forum.post_moderated`: the post or the comment it names, dropped or indexed again as the forum has it. */
  const moderated = async (eventId: string, postId: string, commentId: string) => {
    if (commentId) await indexComment(eventId, commentId);
    else await indexPost(eventId, postId);
  };
  /**
   * Publishes `knowledge.post_indexed` (best effort, straight to the bus: the index holds no
   * outbox): gateways drop their cached search results on it (docs/design/edge.md#read-cache-and-etags). A failed publish
   * is logged, not retried — the gateways' cache TTL bounds what it costs.
   */
  const announceIndexed = async (postId: string) => {
    const { eventId, payload } = encodeEvent("knowledge.post_indexed", { postId });
    await bus
      .publish({
        subject: subjectOf(bus, "knowledge.post_indexed"),
        eventId,
        payload,
        headers: { "aps-event-type": "knowledge.post_indexed", ...traceHeaders() },
      })
      .catch((err: unknown) => log.warn({ err: String(err), postId }, "could not announce an indexed post"));
  };

  return consumeEvents(bus, {
    durable: "knowledge-index",
    maxDeliver: 10,
    handlers: {
      "forum.post_created": (m) => indexPost(m.eventId, m.postId),
      "forum.comment_created": (m) => indexComment(m.eventId, m.commentId),
      "forum.comment_edited": (m) => indexComment(m.eventId, m.commentId),
      "forum.post_on_agenda": (m) => statusChanged(m.eventId, m.postId, "agenda"),
      "forum.post_moderated": (m) => moderated(m.eventId, m.postId, m.commentId),
      "council.case_opened": (m) => statusChanged(m.eventId, m.postId, m.status),
      "council.case_closed": (m) => statusChanged(m.eventId, m.postId, m.outcome),
      "council.handoff_recorded": (m) => statusChanged(m.eventId, m.postId, "implementing"),
      "council.implementation_completed": (m) => statusChanged(m.eventId, m.postId, "completed"),
      "council.post_duplicated": (m) => statusChanged(m.eventId, m.postId, "duplicate"), // docs/design/council.md#duplicates
      "council.case_superseded": (m) => statusChanged(m.eventId, m.postId, "superseded"),
      // An edit changes title, body and tags: read the post again (docs/reference/editing.md).
      "forum.post_edited": (m) => moderated(m.eventId, m.postId, ""),
      "forum.post_withdrawn": (m) => statusChanged(m.eventId, m.postId, "withdrawn"),
    },
  });
}
