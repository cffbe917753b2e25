import type { IncomingMessage, ServerResponse } from "node:http";
import proxyaddr from "proxy-addr";
import { setHttpRoute, type Logger } from "@aps/platform";
import { notModified } from "@aps/api/http/conditional";
import { accessLine } from "@aps/api/http/access-log";
import type { ReadCache, ShortcutEntry } from "./read-cache.js";
import { hardeningHeadersOfGet } from "../http/hardening.js";
import { requestIdOf } from "../http/middleware.js";
import { observeHttpRequest } from "../http/metrics.js";
import {
  countAnonymous,
  handOffCount,
  isPageCall,
  rateLimitHeaderValues,
  type CountedRequest,
  type RequestRateLimiter,
} from "../http/ratelimit.js";

/** A node:http request listener (the express app is one). */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** What the read-cache shortcut needs from the app it stands in front of (app.ts). */
export interface ShortcutOptions {
  reads: ReadCache;
  /** The app's request limits: an answer from the shortcut is counted like any other. */
  limiter: RequestRateLimiter;
  /** express's compiled "trust proxy" (`app.get("trust proxy fn")`): whose `X-Forwarded-For` names the client. */
  trust: (address: string | undefined, hop: number) => boolean;
  /** SKILL_VERSION, sent as `X-Skill-Version` as on every `/v1` answer. */
  skillVersion: number;
  log: Logger;
  /** Whether each answer gets its access-log line (ACCESS_LOG). */
  accessLog: boolean;
  /** The web pages' own `/v1` calls carry it (http/ratelimit.ts `PAGE_CALL_HEADER`): peeked, not counted. */
  pageCallSecret: string;
}

/**
 * The read-cache shortcut (docs/design/edge.md#read-cache-shortcut): a request listener that
 * answers an anonymous `GET` of a URL a route already answered from a still fresh cache entry,
 * before express, and hands every other request to `app` unchanged.
 *
 * Express costs a cached read more than the read itself: its per-request prototype switch makes
 * node's own HTTP code slower, and every app-level middleware is a router layer. So the
 * shortcut does what those middlewares do for such a request without them: it counts the request
 * against the client's anonymous budget (the same limiter; a refused request goes to `app`, which
 * answers the 429 from that count, never counting twice), writes the same headers in the same
 * order (`hardeningHeadersOfGet`, `X-Request-Id`, `Cache-Control: no-store`, `X-Skill-Version`,
 * `RateLimit-Policy`/`RateLimit`, `ETag`, `Content-Type`; `test/e2e/gateway-cache.test.ts`
 * compares them with a route's answer), answers 304 to a matching `If-None-Match`, counts the
 * answer in `aps_http_requests_total` and the access log under the route's template, and names
 * that template on the request's span.
 *
 * Left to `app`: other methods, a request with `Authorization`, a body, or `X-Forwarded-For`
 * from a peer that is not a trusted proxy (express's path warns about it), a URL no route answered
 * yet, an entry gone or stale, and an entry that went out while the request was counted.
 */
export function readCacheShortcut(o: ShortcutOptions, app: RequestListener): RequestListener {
  const hardening = hardeningHeadersOfGet();
  const skillVersion = String(o.skillVersion);
  const secret = Buffer.from(o.pageCallSecret);
  return (req, res) => {
    const url = req.url ?? "";
    if (req.method !== "GET" || !anonymousWithoutBody(req) || !o.reads.shortcut(url)) return app(req, res);
    const peer = req.socket.remoteAddress;
    const forwarded = req.headers["x-forwarded-for"] !== undefined;
    if (forwarded && !o.trust(peer, 0)) return app(req, res);
    const started = process.hrtime.bigint();
    countAnonymous(o.limiter, forwarded ? proxyaddr(req, o.trust) : peer, isPageCall(req, secret)).then(
      (counted) => {
        // the entry may have gone while the request was counted: then the route serves it
        const entry = counted.allowed ? o.reads.shortcut(url) : undefined;
        if (!entry) {
          handOffCount(req, counted);
          return app(req, res);
        }
        answer(req, res, entry, counted, started);
      },
      (err: unknown) => {
        // as rateLimit does: both stores failing is a bug, not an outage; the route answers uncounted
        o.log.error({ err: String(err) }, "rate limiter failed; request not counted");
        app(req, res);
      },
    );
  };

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    entry: ShortcutEntry,
    counted: CountedRequest,
    started: bigint,
  ): void {
    o.reads.countHit();
    setHttpRoute(entry.route);
    const requestId = requestIdOf(req.headers["x-request-id"]);
    const limit = rateLimitHeaderValues(counted);
    const path = (req.url ?? "").split("?", 1)[0]!;
    const line = o.accessLog ? accessLine(o.log, req, path) : undefined;
    const headers = [
      ...hardening,
      "X-Request-Id",
      requestId,
      "Cache-Control",
      "no-store",
      "X-Skill-Version",
      skillVersion,
      "RateLimit-Policy",
      limit.policy,
      "RateLimit",
      limit.limit,
      "ETag",
      entry.etag,
    ];
    const modified = !notModified(req, entry.etag);
    if (modified)
      headers.push("Content-Type", "application/json; charset=utf-8", "Content-Length", String(entry.body.length));
    res.once("finish", () => {
      observeHttpRequest("GET", entry.route, res.statusCode, started);
      if (line) line(entry.route, res.statusCode, modified ? entry.body.length : undefined, requestId);
    });
    res.writeHead(modified ? 200 : 304, headers);
    res.end(modified ? entry.body : undefined);
  }
}

/**
 * A request the shortcut may answer: no credentials (the routes answer a keyed caller's reads
 * after checking the key) and no body (the `/v1` router checks its media type).
 */
function anonymousWithoutBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return h.authorization === undefined && h["transfer-encoding"] === undefined && (h["content-length"] ?? "0") === "0";
}
