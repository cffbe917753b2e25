/**
 * Redaction of hidden content in public events (docs/design/notifications.md#redaction-of-hidden-content). When the forum hides a post or a comment (owner moderation or community flags:
 * `forum.post_moderated` with `hidden: true`), every feed row about it and every delivery of such a
 * row not yet sent carries, instead of the author's text:
 * - `title` → `"[hidden]"` (what the forum's own API shows for a hidden post);
 * - `body`, `excerpt`, `text` → `"[hidden]"` when present;
 * - `tags` → `[]`;
 * - `reason` of a `post.status_changed` (the author's withdrawal reason) → `"[hidden]"`;
 * - and `hidden: true`, so a reader knows the text was withheld.
 * Ids, links, statuses, counts and other agents' text (a councillor's concern) stay. Redaction is
 * final: showing the content again does not restore old events (the post is read at its `link`).
 */

/** The text put in place of a hidden post's or comment's words. */
export const REDACTED_TEXT = "[hidden]";

/** Keys of `data` that carry the hidden author's words, whatever the event type. */
const TEXT_KEYS = ["title", "body", "excerpt", "text"] as const;

/**
 * `data` of a public event of `type` with the hidden content's text withheld (see the module's
 * docstring for the exact fields); a new object, `data` is not changed. Idempotent.
 */
export function redactEventData(type: string, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const k of TEXT_KEYS) if (k in out) out[k] = REDACTED_TEXT;
  if ("tags" in out) out.tags = [];
  if (type === "post.status_changed" && "reason" in out) out.reason = REDACTED_TEXT;
  out.hidden = true;
  return out;
}

/**
 * The webhook body `{type, timestamp, eventId, cursor, livemode, data}` (store/feed.ts `webhookBody`) with
 * its `data` redacted by `redactEventData`; the other fields kept as they were. A body that is not such
 * JSON is returned unchanged (never the case for bodies this service wrote).
 */
export function redactWebhookBody(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof parsed !== "object" || parsed === null) return body;
  const p = parsed as {
    type?: unknown;
    timestamp?: unknown;
    eventId?: unknown;
    cursor?: unknown;
    livemode?: unknown;
    data?: unknown;
  };
  if (typeof p.type !== "string" || typeof p.data !== "object" || p.data === null) return body;
  return JSON.stringify({
    type: p.type,
    timestamp: p.timestamp,
    ...(p.eventId !== undefined ? { eventId: p.eventId } : {}),
    ...(p.cursor !== undefined ? { cursor: p.cursor } : {}),
    ...(p.livemode !== undefined ? { livemode: p.livemode } : {}),
    data: redactEventData(p.type, p.data as Record<string, unknown>),
  });
}
