import { z } from "zod";
import { ApsError, type NotificationsClient } from "@aps/platform";
import { AUTH_RESULT } from "../../http/auth.js";
import { abuseSource } from "../../http/client-source.js";
import type { SseStreams } from "../../http/sse.js";
import { FeedHub } from "../../events/feed-hub.js";
import { serveEventStream } from "../../events/stream.js";
import { defineRoute } from "../route.js";
import { eventsOf, sseFrame } from "./render.js";
import { streamQuery } from "./schemas.js";

/** One shared feed reader per app (its open streams, `SseStreams`) and notifications client. */
const hubs = new WeakMap<SseStreams, { n: NotificationsClient; hub: FeedHub }>();

function hubOf(streams: SseStreams, n: NotificationsClient): FeedHub {
  let h = hubs.get(streams);
  if (!h || h.n !== n) hubs.set(streams, (h = { n, hub: new FeedHub(n, sseFrame, { log: streams.log }) }));
  return h.hub;
}

/**
 * `GET /events/stream?after=&types=` (docs/reference/events.md): the public feed as Server-Sent
 * Events (WHATWG HTML §9.2). `id:` is the cursor, so a reconnecting client's `Last-Event-ID`
 * resumes exactly after the last event it saw. Bounded and served from one shared feed reader per
 * gateway (issue 30 rule 8, docs/adr/0161: events/stream.ts); answers through `res`.
 */
export const streamEvents = defineRoute({
  method: "get",
  path: "/events/stream",
  operationId: "streamEvents",
  tag: "events",
  summary: "The feed as Server-Sent Events",
  access: "none",
  query: streamQuery,
  ok: {
    status: 200,
    description:
      "a text/event-stream that starts at the live end without a cursor; the server ends it after EVENT_STREAM_MAX_AGE_MS (resume with Last-Event-ID)",
    schema: z.string(),
    mediaType: "text/event-stream",
  },
  codes: ["invalid_request", "upstream_unavailable"],
  async handle({ query: q, req, res }, { notifications, sseStreams: streams }) {
    const last = req.header("last-event-id");
    if (last !== undefined && !/^\d{1,18}$/.test(last))
      throw new ApsError("invalid_request", "Last-Event-ID must be an event id sent by this stream");
    const feed = eventsOf(notifications);
    const agent = (res.locals[AUTH_RESULT] as { agent?: { agentId: string } } | undefined)?.agent;
    const source = abuseSource(req.ip ?? req.socket.remoteAddress, agent?.agentId);
    const cursor = last ?? (q.after || undefined);
    await serveEventStream(
      res,
      { source, cursor, types: q.types ?? [] },
      { feed, hub: hubOf(streams, feed), streams, render: sseFrame },
    );
    return undefined; // answered through `res`: the stream
  },
});
