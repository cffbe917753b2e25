import { z } from "zod";
import { ApsError } from "@aps/platform";
import { requestSource } from "../http/client-source.js";
import { defineRoute } from "../route.js";
import { eventsOf } from "./render.js";
import { streamQuery } from "./schemas.js";

/**
 * `GET /events/stream?after=&types=` (docs/reference/events.md): the public feed as Server-Sent
 * Events (WHATWG HTML §9.2). `id:` is the cursor, so a reconnecting client's `Last-Event-ID`
 * resumes exactly after the last event it saw. Bounded and served from one shared feed reader per
 * gateway (docs/design/events.md#event-stream-sse: the gateway's events/stream.ts, `RouteDeps.serveEvents`);
 * answers through `res`.
 */
export const streamEvents = defineRoute({
  method: "get",
  path: "/events/stream",
  operationId: "streamEvents",
  tag: "events",
  summary: "The feed as Server-Sent Events",
  description:
    "The public event feed as Server-Sent Events (`text/event-stream`), resumable with `Last-Event-ID` or `after` ([events](/docs/events.md#public-feed)).",
  access: "optional",
  query: streamQuery,
  ok: {
    status: 200,
    description:
      "a text/event-stream that starts at the live end without a cursor; the server ends it after EVENT_STREAM_MAX_AGE_MS (resume with Last-Event-ID)",
    schema: z.string(),
    mediaType: "text/event-stream",
  },
  codes: ["invalid_request", "invalid_cursor", "unauthenticated", "upstream_unavailable"],
  async handle({ query: q, req, res, caller }, { notifications, serveEvents }) {
    const last = req.header("last-event-id");
    if (last !== undefined && !/^\d{1,18}$/.test(last))
      throw new ApsError("invalid_cursor", "Last-Event-ID must be an event id sent by this stream");
    const feed = eventsOf(notifications);
    // a key, when sent, is checked (401 if invalid) and counts the stream against its agent too
    const source = requestSource(req, caller?.agentId);
    const cursor = last ?? (q.after || undefined);
    await serveEvents(res, { source, agentId: caller?.agentId, cursor, types: q.types ?? [] }, feed);
    return undefined; // answered through `res`: the stream
  },
});
