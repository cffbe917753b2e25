import type { Response } from "express";
import { eventFeedReads, type NotificationsClient } from "@aps/platform";
import type { notifications } from "@aps/proto";
import type { SseStream, SseStreams } from "../http/sse.js";
import { FeedHub, type FeedSource, type HubEvent, type LiveListener } from "./feed-hub.js";

/** One `GET /v1/events/stream` request, validated (api/events/stream-events.ts). */
export type { EventStreamRequest as StreamRequest } from "@aps/api/route";
import type { EventStreamRequest as StreamRequest } from "@aps/api/route";

/** One shared feed reader per set of open streams (`SseStreams`, one per gateway) and notifications client. */
const hubs = new WeakMap<SseStreams, { n: NotificationsClient; hub: FeedHub }>();

/**
 * `RouteDeps.serveEvents` of an app (api/route.ts): serves each stream with `serveEventStream`
 * from one shared feed reader (`FeedHub`) per `streams` and notifications client, admitted against
 * `streams` (the gateway's open streams, ended when it stops); `render` is each event's SSE frame.
 */
export function eventStreamServer(
  streams: SseStreams,
  render: (e: notifications.FeedEvent) => string,
): (res: Response, q: StreamRequest, feed: NotificationsClient) => Promise<void> {
  return (res, q, feed) => {
    let h = hubs.get(streams);
    if (!h || h.n !== feed) hubs.set(streams, (h = { n: feed, hub: new FeedHub(feed, render, { log: streams.log }) }));
    return serveEventStream(res, q, { feed, hub: h.hub, streams, render });
  };
}

/** What a stream is served from. */
export interface StreamDeps {
  /** The feed, for a stream's own catch-up reads. */
  feed: FeedSource;
  /** The gateway's one shared reader (live fan-out). */
  hub: FeedHub;
  streams: SseStreams;
  /** The SSE frame of one event (the same as the hub's). */
  render: (e: notifications.FeedEvent) => string;
}

/** Events per catch-up read (the feed's page maximum). */
const PAGE = 100;
/** Pause before another catch-up read when the live fan-out cannot take the stream yet, ms. */
const REJOIN_MS = 500;
/** What EventSource waits before reconnecting after the stream ended (the SSE `retry:` field), ms. */
export const STREAM_RETRY_MS = 2_000;

const noop = () => undefined;

/**
 * Serves one event stream (docs/design/events.md#event-stream-sse). Admits it against the
 * source and replica caps first (429/503 problem+json). Without a cursor it starts at the live end
 * (the shared reader's head after a read that began after the request came); with one, the stream
 * first catches up with keyset reads of its own (`ListEvents` after its position, its types, 100 at
 * a time, each only once the previous page was written), then joins the live fan-out of the shared
 * reader, whose recent events close the gap — so idle and live streams make no reads of their own.
 * Errors before the stream starts are problem+json (the first catch-up read answers a cursor that
 * was never issued with 400, docs/design/edge.md#validation); a catch-up read failing later ends
 * the stream (the client resumes with Last-Event-ID).
 */
export async function serveEventStream(res: Response, q: StreamRequest, deps: StreamDeps): Promise<void> {
  const { hub, streams } = deps;
  const ticket = streams.admit(q.source, q.agentId);
  hub.acquire();
  let holding = true;
  const letGo = () => {
    if (!holding) return;
    holding = false;
    hub.release();
  };
  const types = new Set(q.types);
  const read = (after: bigint) => {
    eventFeedReads.inc({ reader: "catch_up" });
    return deps.feed.listEvents({ after: after.toString(), types: q.types, limit: PAGE });
  };
  let stream: SseStream | undefined;
  try {
    let position: bigint;
    let page: notifications.ListEventsResponse | undefined;
    if (q.cursor === undefined) {
      position = await hub.fresh();
    } else {
      position = BigInt(q.cursor);
      // the shared reader starts meanwhile (its failure only delays the join: the loop reads again)
      const started = hub.head === undefined ? hub.fresh().then(noop, noop) : undefined;
      page = await read(position); // a cursor never issued is a 400 here (docs/design/edge.md#validation)
      await started;
    }
    res.status(200);
    res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
    res.setHeader("X-Accel-Buffering", "no");
    res.flushHeaders();
    const s = (stream = streams.open(res, ticket));
    s.send(`retry: ${STREAM_RETRY_MS}\n\n`);
    const live: LiveListener = (events: readonly HubEvent[], head: bigint) => {
      const mine = events.filter((e) => e.seq > position && (types.size === 0 || types.has(e.type)));
      if (mine.length > 0) s.send(mine);
      if (head > position) position = head;
    };
    s.onClose(() => {
      hub.detach(live);
      letGo();
    });
    for (;;) {
      if (page) {
        s.send(
          page.items.map((e) => {
            const frame = deps.render(e);
            return { frame, bytes: Buffer.byteLength(frame) };
          }),
        );
        const last = page.items.at(-1);
        if (last) position = BigInt(last.cursor);
        if (page.items.length >= PAGE) {
          await s.writable();
          if (!s.open) return;
          page = await read(position);
          continue;
        }
        // a short page: every event up to the head read before it was seen
        if (/^\d+$/.test(page.head) && BigInt(page.head) > position) position = BigInt(page.head);
      }
      const joined = s.open ? hub.join(position, live) : undefined;
      if (joined) {
        live(joined.replay, joined.head);
        return;
      }
      await s.sleep(REJOIN_MS);
      await s.writable();
      if (!s.open) return;
      page = await read(position);
    }
  } catch (err) {
    if (!stream) {
      ticket.release();
      letGo();
      throw err;
    }
    stream.close("upstream_error");
  }
}
