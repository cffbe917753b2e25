import type { IncomingMessage, ServerResponse } from "node:http";
import proxyaddr from "proxy-addr";
import { LIVE_KEY_PREFIX, setHttpRoute, type Logger } from "@aps/platform";
import type { identity } from "@aps/proto";
import { notModified } from "@aps/api/http/conditional";
import { accessLine } from "@aps/api/http/access-log";
import { abuseSource } from "@aps/api/http/client-source";
import { AUTH_RESULT, bearer, suspension } from "@aps/api/http/locals";
import { ACCESS_TOKEN_PREFIX } from "../oauth/store.js";
import type { KeyResolver } from "./auth-cache.js";
import type { ReadCache, ShortcutEntry } from "./read-cache.js";
import { hardeningHeadersOfGet } from "../http/hardening.js";
import { requestIdOf } from "../http/middleware.js";
import { observeHttpRequest } from "../http/metrics.js";
import {
  countAnonymous,
  countKeyed,
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
  /** The app's key resolver: API keys and OAuth access tokens, through the authentication cache. */
  keys: KeyResolver;
  /** Whether a loopback client counts as one abuse source per agent (app.ts `loopbackPerAgent`). */
  loopbackPerAgent: boolean;
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
 * answers a `GET` of a URL a route already answered from a still fresh cache entry, before
 * express, and hands every other request to `app` unchanged.
 *
 * Express costs a cached read more than the read itself: its per-request prototype switch makes
 * node's own HTTP code slower, and every app-level middleware is a router layer. So the
 * shortcut does what those middlewares do for such a request without them: it resolves a key
 * through the same resolver and counts the request against the same budgets (the agent's and its
 * source's, or the client address's; a refused request goes to `app` with its count and its key's
 * outcome, which answers the 429 from them, never counting or asking twice), writes the same
 * headers in the same order (`hardeningHeadersOfGet`, `X-Request-Id`, `Cache-Control: no-store`,
 * `X-Skill-Version`, `RateLimit-Policy`/`RateLimit`, `ETag`, `Content-Type`;
 * `test/e2e/gateway-cache.test.ts` compares them with a route's answer), answers 304 to a matching
 * `If-None-Match`, counts the answer in `aps_http_requests_total` and the access log under the
 * route's template, and names that template on the request's span.
 *
 * A keyed caller gets only collections and searches (`ReadCache.shortcut`). Left to `app`: other
 * methods, a body, a malformed `Authorization`, a key that is no live API key or OAuth access
 * token, does not resolve or belongs to a suspended agent (the app answers 401/403 from the
 * outcome handed over), `X-Forwarded-For` from a peer that is not a trusted proxy (express's path
 * warns about it), a URL no route answered yet, an entry gone or stale, and an entry that went out
 * while the request was counted.
 */
export function readCacheShortcut(o: ShortcutOptions, app: RequestListener): RequestListener {
  const hardening = hardeningHeadersOfGet();
  const skillVersion = String(o.skillVersion);
  const secret = Buffer.from(o.pageCallSecret);
  return (req, res) => {
    const url = req.url ?? "";
    const authorization = req.headers.authorization;
    if (req.method !== "GET" || !withoutBody(req) || !o.reads.shortcut(url, authorization !== undefined))
      return app(req, res);
    const peer = req.socket.remoteAddress;
    const forwarded = req.headers["x-forwarded-for"] !== undefined;
    if (forwarded && !o.trust(peer, 0)) return app(req, res);
    let handed = false;
    const toApp = () => {
      handed = true;
      app(req, res);
    };
    serve(req, res, url, authorization, forwarded ? proxyaddr(req, o.trust) : peer, toApp).catch((err: unknown) => {
      // a fault of ours must not take the process down: the app answers, or the connection ends
      o.log.error({ err: String(err) }, "read-cache shortcut failed");
      if (!handed && !res.headersSent) toApp();
      else if (!res.writableEnded) res.destroy();
    });
  };

  /** Resolves the key, counts the request, then answers from the entry or hands the request to the app. */
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    authorization: string | undefined,
    address: string | undefined,
    toApp: () => void,
  ): Promise<void> {
    const started = process.hrtime.bigint();
    const line = o.accessLog ? accessLine(o.log, req, url.split("?", 1)[0]!) : undefined;
    let agent: identity.Agent | undefined;
    if (authorization !== undefined) {
      let key: string | undefined;
      try {
        key = bearer(req);
      } catch {
        return toApp(); // malformed: the app answers the 401
      }
      if (key === undefined || !(key.startsWith(LIVE_KEY_PREFIX) || key.startsWith(ACCESS_TOKEN_PREFIX)))
        return toApp();
      try {
        agent = await o.keys.authenticate(key);
      } catch (error) {
        handOffKey(res, { error });
        return toApp();
      }
      // a suspended agent's key: the app counts it and answers 403 (http/auth.ts)
      if (suspension(agent)) {
        handOffKey(res, { agent });
        return toApp();
      }
    }
    const pageCall = isPageCall(req, secret);
    let counted: CountedRequest;
    try {
      counted = agent
        ? await countKeyed(o.limiter, agent.agentId, abuseSource(address, agent.agentId, o.loopbackPerAgent), pageCall)
        : await countAnonymous(o.limiter, address, pageCall);
    } catch (err) {
      // as rateLimit does: both stores failing is a bug, not an outage; the route answers uncounted
      o.log.error({ err: String(err) }, "rate limiter failed; request not counted");
      if (agent) handOffKey(res, { agent });
      return toApp();
    }
    // the entry may have gone while the request was counted: then the route serves it
    const entry = counted.allowed ? o.reads.shortcut(url, agent !== undefined) : undefined;
    if (!entry) {
      handOffCount(req, counted);
      if (agent) handOffKey(res, { agent });
      return toApp();
    }
    answer(req, res, entry, counted, started, line);
  }

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    entry: ShortcutEntry,
    counted: CountedRequest,
    started: bigint,
    line: ReturnType<typeof accessLine>,
  ): void {
    o.reads.countHit();
    setHttpRoute(entry.route);
    const requestId = requestIdOf(req.headers["x-request-id"]);
    const limit = rateLimitHeaderValues(counted);
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

/** A request without a body (the `/v1` router checks a body's media type). */
function withoutBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return h["transfer-encoding"] === undefined && (h["content-length"] ?? "0") === "0";
}

/**
 * Leaves the outcome of resolving the request's key where the rate limiter and `authenticate`
 * read it (`res.locals[AUTH_RESULT]`, @aps/api http/locals.ts): express keeps a `res.locals` it
 * finds, so the app does not ask for the key again.
 */
function handOffKey(res: ServerResponse, outcome: { agent: identity.Agent } | { error: unknown }): void {
  const r = res as ServerResponse & { locals?: Record<string, unknown> };
  r.locals ??= Object.create(null) as Record<string, unknown>;
  r.locals[AUTH_RESULT] = outcome;
}
