import { defineRoute } from "../route.js";
import { eventsOf, renderFeedEvent } from "./render.js";
import { feedQuery, FeedPage } from "./schemas.js";

/** `GET /events?after=&types=&limit=` (docs/reference/events.md, docs/design/notifications.md#ingest): the public feed, oldest first; no key. */
export const listEvents = defineRoute({
  method: "get",
  path: "/events",
  operationId: "listEvents",
  tag: "events",
  summary: "The public feed, oldest first",
  description:
    "The public event feed, oldest first, from the position `after` ([events](/docs/events.md#public-feed)).",
  access: "none",
  query: feedQuery,
  ok: { status: 200, description: "a page of events", schema: FeedPage },
  codes: ["invalid_request", "upstream_unavailable"],
  async handle({ query: q }, { notifications, livemode }) {
    const page = await eventsOf(notifications).listEvents({ after: q.after ?? "", types: q.types, limit: q.limit });
    return { items: page.items.map((e) => renderFeedEvent(e, livemode)), nextCursor: page.nextCursor };
  },
});
