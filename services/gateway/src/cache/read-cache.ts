import type { Request, Response } from "express";
import { LRUCache } from "lru-cache";
import { gatewayCacheLookups } from "@aps/platform";
import { notModified, strongEtag } from "@aps/api/http/conditional";
import { postKey, type ReadScope } from "@aps/api/route";

/** What a cached read depends on (api/route.ts `ReadScope`, docs/design/edge.md#read-cache-and-etags). */
export type { ReadScope } from "@aps/api/route";

/** Tunables (gateway config READ_CACHE_TTL_MS, READ_CACHE_MAX_BYTES); either at 0 turns caching off. */
export interface ReadCacheOptions {
  /** Longest an entry is served, ms: bounds staleness when an invalidating event is lost. */
  ttlMs: number;
  /** Most bytes held (bodies plus keys), least recently used dropped first. */
  maxBytes: number;
  /**
   * The clock entries age by, ms from any fixed origin (default `performance.now()`); a test moves
   * its own instead of waiting out a TTL (docs/design/tests.md "Waiting").
   */
  now?: () => number;
}

/** One cached representation: the JSON bytes as sent and their strong ETag. */
interface Representation {
  body: Buffer;
  etag: string;
  /** Collection generation the entry was produced under (collections and searches). */
  gen: number;
  /** Vote generation the entry was produced under (collections and searches; docs/design/edge.md#cache-invalidation-by-events). */
  voteGen: number;
  /** Search generation the entry was produced under (searches). */
  searchGen: number;
}

/**
 * What answered one exact public URL from the cache (docs/design/edge.md#read-cache-shortcut): the entry's normalised key
 * and scope, and the route template for the metrics and the trace.
 */
interface Shortcut {
  key: string;
  scope: ReadScope;
  route: string;
  /** Whether a route answered this URL to a caller without a key (then the shortcut may too). */
  anonymous: boolean;
}

/**
 * Bounds of the shortcut's memory: URLs remembered (each costs its URL, key and route, charged as
 * UTF-16 plus an overhead), their bytes in all, and the longest URL remembered (a longer one —
 * odd query strings sent to fill the map — always goes through its route).
 */
const SHORTCUTS = { max: 10_000, maxBytes: 2 * 1024 * 1024, maxUrlLength: 512 };

/** A fresh entry the shortcut answers from: the route template that produced it, its JSON bytes and strong ETag. */
export interface ShortcutEntry {
  route: string;
  body: Buffer;
  etag: string;
}

/** A miss being produced; requests for the same key wait for it instead of asking again. */
interface Fill {
  promise: Promise<Representation>;
  scope: ReadScope;
}

/** Bytes an entry is charged beyond its body and key (object and bookkeeping overhead, estimated). */
const ENTRY_OVERHEAD_BYTES = 96;

/** The cache key of `GET /posts/{id}` (api/route.ts `postKey`). */
export { postKey } from "@aps/api/route";

/**
 * The gateway's cache of public reads (docs/design/edge.md#read-cache-and-etags): the JSON bytes of a GET, keyed by its
 * normalised URL, in an LRU bounded by bytes (`lru-cache` with `maxSize`), each entry living at
 * most `ttlMs`. Only answers that do not depend on the caller are cached (the routes decide; see
 * `serveUncached`). Every answer — cached or not — carries a strong `ETag` and is a 304 to a
 * matching `If-None-Match` (RFC 9110 §13.1.2).
 *
 * Invalidation: `invalidatePost` (a write through this gateway about one post) drops that post's
 * detail and every collection; `invalidateAll` drops everything. A miss produced while an
 * invalidation about it happened is answered but not stored, and later requests do not wait for
 * it, so a write through this gateway is visible to the next read (read-your-writes).
 *
 * A vote through another replica arrives as an event (`invalidatePost(id, "revalidate")`): it
 * drops that post's detail, but only marks the collections stale. A stale collection is still served, within
 * its TTL, while one refresh per key runs in the background (stale-while-revalidate, RFC 5861's
 * model): a burst of votes elsewhere costs each list at most one production in flight per gateway
 * instead of emptying every list on every gateway (docs/design/edge.md#cache-invalidation-by-events).
 */
export class ReadCache {
  private readonly lru: LRUCache<string, Representation> | undefined;
  private readonly fills = new Map<string, Fill>();
  /** Exact URL (≤ 512 characters) of a GET → the entry a route answered it from (docs/design/edge.md#read-cache-shortcut); ≤ 10,000 URLs, ≤ 2 MiB. */
  private readonly shortcuts: LRUCache<string, Shortcut> | undefined;
  /** Collection generation: bumped by every invalidation; older collection entries are stale. */
  private gen = 0;
  /** Search generation: bumped when the search index changes; older search entries are stale. */
  private searchGen = 0;
  /** Vote generation: bumped by a vote seen as an event; older collections are served stale while refreshed. */
  private voteGen = 0;

  constructor(opts: ReadCacheOptions) {
    if (opts.ttlMs > 0 && opts.maxBytes > 0) {
      this.lru = new LRUCache<string, Representation>({
        maxSize: opts.maxBytes,
        sizeCalculation: (r, key) => r.body.length + key.length * 2 + ENTRY_OVERHEAD_BYTES,
        ttl: opts.ttlMs,
        updateAgeOnGet: false,
        // an injected clock is read at every check (lru-cache otherwise caches it for 1 ms)
        ...(opts.now ? { perf: { now: opts.now }, ttlResolution: 0 } : {}),
      });
      this.shortcuts = new LRUCache<string, Shortcut>({
        max: SHORTCUTS.max,
        maxSize: SHORTCUTS.maxBytes,
        sizeCalculation: (s, url) => (url.length + s.key.length + s.route.length) * 2 + ENTRY_OVERHEAD_BYTES,
      });
    }
  }

  /**
   * The fresh entry a route answered this exact URL's `GET` from (docs/design/edge.md#read-cache-shortcut):
   * `url` as the request line gives it (query included), the route template, and the bytes and
   * ETag to send. For a `keyed` caller only a collection or search entry; for an anonymous one only
   * a URL a route answered anonymously. Undefined — the request goes to its route — for a URL no
   * route answered yet, or an entry gone or stale (the route serves it and refreshes it). Counts
   * nothing: the caller counts the hit when it answers (`countHit`).
   */
  shortcut(url: string, keyed: boolean): ShortcutEntry | undefined {
    const s = this.shortcuts?.get(url);
    if (!s || (keyed ? s.scope.kind === "post" : !s.anonymous)) return undefined;
    const hit = this.lru!.get(s.key);
    if (!hit || this.state(hit, s.scope) !== "fresh") return undefined;
    return { route: s.route, body: hit.body, etag: hit.etag };
  }

  /** Counts one answer from the cache that no route served (`aps_gateway_cache_lookups_total{result="hit"}`). */
  countHit(): void {
    gatewayCacheLookups.inc({ cache: "read", result: "hit" });
  }

  /**
   * Remembers that a route answered `req`'s exact URL from `key` (docs/design/edge.md#read-cache-shortcut): a `GET`
   * without a body; a keyed one only for a collection or search, which every caller gets alike (a
   * post's detail carries a keyed caller's own vote). `anonymous` records that the route admitted
   * a caller without a key for this URL, so only then does the shortcut answer one.
   */
  private learn(req: Request, key: string, scope: ReadScope): void {
    const path = (req.route as { path?: unknown } | undefined)?.path;
    if (req.method !== "GET" || typeof path !== "string" || !withoutBody(req)) return;
    const keyed = req.headers.authorization !== undefined;
    if ((keyed && scope.kind === "post") || req.originalUrl.length > SHORTCUTS.maxUrlLength) return;
    const known = this.shortcuts!.get(req.originalUrl);
    if (known && (keyed || known.anonymous)) return;
    this.shortcuts!.set(req.originalUrl, { key, scope, route: `${req.baseUrl}${path}`, anonymous: !keyed });
  }

  /**
   * Answers GET `key` (a normalised URL, query parameters in a fixed order) from the cache, or
   * from `produce` (the route's JSON body) on a miss, storing it. Errors thrown by `produce` are
   * passed on (never cached).
   */
  async serve(
    req: Request,
    res: Response,
    key: string,
    scope: ReadScope,
    produce: () => Promise<unknown>,
  ): Promise<void> {
    if (!this.lru) return this.serveUncached(req, res, produce);
    this.learn(req, key, scope);
    const hit = this.lru.get(key);
    const state = hit ? this.state(hit, scope) : "gone";
    if (state === "fresh") {
      gatewayCacheLookups.inc({ cache: "read", result: "hit" });
      send(req, res, hit!);
      return;
    }
    const running = this.fills.get(key);
    if (state === "stale") {
      // Within its TTL and only a vote seen as an event made it old: serve it, refresh once behind it.
      gatewayCacheLookups.inc({ cache: "read", result: "stale" });
      if (!running) this.fill(key, scope, produce).catch(() => undefined);
      send(req, res, hit!);
      return;
    }
    if (running) {
      gatewayCacheLookups.inc({ cache: "read", result: "joined" });
      send(req, res, await running.promise);
      return;
    }
    gatewayCacheLookups.inc({ cache: "read", result: "miss" });
    send(req, res, await this.fill(key, scope, produce));
  }

  /** Answers from `produce` without caching (caller-specific bodies), with ETag and 304 all the same. */
  async serveUncached(req: Request, res: Response, produce: () => Promise<unknown>): Promise<void> {
    gatewayCacheLookups.inc({ cache: "read", result: "bypass" });
    send(req, res, represent(await produce(), this.gen, this.voteGen, this.searchGen));
  }

  /**
   * Drops `postId`'s detail, and every collection: at once (`"drop"`: a write through this gateway,
   * read-your-writes, or an event that may add, remove or reorder posts), or as
   * stale-while-revalidate (`"revalidate"`: a vote seen as an event, docs/design/edge.md#cache-invalidation-by-events): collections
   * are then served until a refresh replaces them, never past their TTL.
   */
  invalidatePost(postId: string, how: "drop" | "revalidate" = "drop"): void {
    const key = postKey(postId);
    this.lru?.delete(key);
    if (how === "revalidate") {
      this.voteGen++;
      this.fills.delete(key);
      return;
    }
    this.gen++;
    for (const [k, f] of this.fills) if (f.scope.kind !== "post" || k === key) this.fills.delete(k);
  }

  /** Drops every search result (the search index changed). */
  invalidateSearch(): void {
    this.searchGen++;
    for (const [k, f] of this.fills) if (f.scope.kind === "search") this.fills.delete(k);
  }

  /** Drops everything (an event the cache cannot attribute to one post). */
  invalidateAll(): void {
    this.gen++;
    this.lru?.clear();
    this.fills.clear();
    this.shortcuts?.clear();
  }

  /** Entries and bytes held now (tests, metrics). */
  get stats(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: this.lru?.size ?? 0, bytes: this.lru?.calculatedSize ?? 0, maxBytes: this.lru?.maxSize ?? 0 };
  }

  /**
   * `rep`'s state for its scope: `fresh`; `stale` (only votes seen as events happened since:
   * served while refreshed); `gone` (a write here, another event, a search index change or a clear
   * since: produced again before answering). A post's detail is deleted when invalidated, so it is fresh.
   */
  private state(rep: Representation, scope: ReadScope): "fresh" | "stale" | "gone" {
    if (scope.kind === "post") return "fresh";
    if (rep.gen !== this.gen || (scope.kind === "search" && rep.searchGen !== this.searchGen)) return "gone";
    return rep.voteGen === this.voteGen ? "fresh" : "stale";
  }

  /** Produces a miss once, stores it unless an invalidation about it happened meanwhile. */
  private fill(key: string, scope: ReadScope, produce: () => Promise<unknown>): Promise<Representation> {
    const gen = this.gen;
    const voteGen = this.voteGen;
    const searchGen = this.searchGen;
    const f: Fill = {
      scope,
      promise: produce().then((body) => {
        const rep = represent(body, gen, voteGen, searchGen);
        // Still registered = no invalidation touched this key while it was produced.
        if (this.fills.get(key) === f) this.lru!.set(key, rep);
        return rep;
      }),
    };
    const settled = () => {
      if (this.fills.get(key) === f) this.fills.delete(key);
    };
    f.promise.then(settled, settled);
    this.fills.set(key, f);
    return f.promise;
  }
}

function represent(body: unknown, gen: number, voteGen: number, searchGen: number): Representation {
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  return { body: bytes, etag: strongEtag(bytes), gen, voteGen, searchGen };
}

/** A request without a body (the `/v1` router would check its media type). */
function withoutBody(req: Request): boolean {
  const h = req.headers;
  return h["transfer-encoding"] === undefined && (h["content-length"] ?? "0") === "0";
}

/** Sends `rep` as `application/json` with its ETag, or 304 without a body when the client holds it. */
function send(req: Request, res: Response, rep: Representation): void {
  res.setHeader("ETag", rep.etag);
  if (notModified(req, rep.etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).setHeader("Content-Type", "application/json; charset=utf-8");
  res.send(rep.body);
}
