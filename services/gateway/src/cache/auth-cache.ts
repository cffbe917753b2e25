import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { gatewayCacheLookups, type IdentityClient } from "@aps/platform";
import type { identity } from "@aps/proto";

/** What resolves an API key to its agent: the identity service (keyResolverOf), or this cache in front of it. */
export interface KeyResolver {
  /** The agent owning `apiKey`; rejects with ApsError `unauthenticated` for an unknown or revoked key. */
  authenticate(apiKey: string): Promise<identity.Agent>;
}

/** The identity service's `Authenticate` as a KeyResolver (one call per key asked). */
export function keyResolverOf(identity: Pick<IdentityClient, "authenticate">): KeyResolver {
  return { authenticate: (apiKey) => identity.authenticate({ apiKey }) };
}

/** Tunables of the authentication cache (gateway config AUTH_CACHE_TTL_MS, AUTH_CACHE_MAX_ENTRIES). */
export interface AuthCacheOptions {
  /** How long a resolved key is trusted without asking identity again, ms; 0 turns the cache off. */
  ttlMs: number;
  /** Most keys held at once; the least recently used is dropped first. */
  maxEntries: number;
}

/**
 * Default lifetime of a cached authentication, ms, for a gateway that follows the event bus (its
 * entries are dropped by event and on a lost connection) and for one that does not (docs/design/edge.md#authentication-cache).
 */
export const AUTH_TTL_FOLLOWING_EVENTS_MS = 60_000;
/** See AUTH_TTL_FOLLOWING_EVENTS_MS: without the bus, the TTL alone bounds a revoked key's use. */
export const AUTH_TTL_WITHOUT_EVENTS_MS = 5_000;

/** SHA-256 of an API key (base64): the cache's key, so no plaintext key is kept beyond the request. */
function keyHash(apiKey: string): string {
  return createHash("sha256").update(apiKey, "utf8").digest("base64");
}

/**
 * Authentication cache of the gateway (docs/design/edge.md#authentication-cache): API key hash → agent for `ttlMs`, at most
 * `maxEntries` keys (LRU, `lru-cache`), so a request with a known key does not call the identity
 * service again within the TTL. Only positive answers are kept: an unknown or revoked key is
 * asked again every time (spraying random keys costs no memory here; the per-IP rate limit bounds
 * it). Concurrent lookups of one key share a single identity call.
 *
 * `dropAgent` removes every cached key of an agent at once — on key rotation through this
 * gateway, on the `identity.key_rotated` event from the others, and on seat changes. A lookup
 * that was in flight during a drop is answered but not cached, so a rotation never leaves the
 * old key cached behind it.
 */
export class AuthCache implements KeyResolver {
  private readonly lru: LRUCache<string, identity.Agent> | undefined;
  /** agentId → hashes of its cached keys (kept in step with the LRU through `dispose`). */
  private readonly byAgent = new Map<string, Set<string>>();
  private readonly inflight = new Map<string, Promise<identity.Agent>>();
  /** Bumped by every drop; a lookup started under an older epoch is not cached. */
  private epoch = 0;

  constructor(
    private readonly resolver: KeyResolver,
    opts: AuthCacheOptions,
  ) {
    if (opts.ttlMs > 0) {
      this.lru = new LRUCache<string, identity.Agent>({
        max: opts.maxEntries,
        ttl: opts.ttlMs,
        updateAgeOnGet: false,
        dispose: (agent, hash) => this.unindex(agent.agentId, hash),
      });
    }
  }

  /** The agent of `apiKey`, from the cache when it holds a live answer, else from identity. */
  authenticate(apiKey: string): Promise<identity.Agent> {
    if (!this.lru) return this.resolver.authenticate(apiKey);
    const hash = keyHash(apiKey);
    const hit = this.lru.get(hash);
    if (hit) {
      gatewayCacheLookups.inc({ cache: "auth", result: "hit" });
      return Promise.resolve(hit);
    }
    const running = this.inflight.get(hash);
    if (running) {
      gatewayCacheLookups.inc({ cache: "auth", result: "joined" });
      return running;
    }
    gatewayCacheLookups.inc({ cache: "auth", result: "miss" });
    const epoch = this.epoch;
    const lookup = this.resolver.authenticate(apiKey).then((agent) => {
      if (this.epoch === epoch) this.store(hash, agent);
      return agent;
    });
    const settled = () => {
      if (this.inflight.get(hash) === lookup) this.inflight.delete(hash);
    };
    lookup.then(settled, settled);
    this.inflight.set(hash, lookup);
    return lookup;
  }

  /** Forgets every cached key of `agentId` at once and stops lookups in flight from being cached. */
  dropAgent(agentId: string): void {
    this.epoch++;
    this.inflight.clear();
    const hashes = this.byAgent.get(agentId);
    if (!hashes || !this.lru) return;
    for (const h of [...hashes]) this.lru.delete(h);
    this.byAgent.delete(agentId);
  }

  /** Forgets every cached key (a rotation that cannot be attributed to one agent). */
  dropAll(): void {
    this.epoch++;
    this.inflight.clear();
    this.lru?.clear();
    this.byAgent.clear();
  }

  /** Number of keys cached now (tests, metrics). */
  get size(): number {
    return this.lru?.size ?? 0;
  }

  private store(hash: string, agent: identity.Agent): void {
    this.lru!.set(hash, agent);
    let set = this.byAgent.get(agent.agentId);
    if (!set) this.byAgent.set(agent.agentId, (set = new Set()));
    set.add(hash);
  }

  private unindex(agentId: string, hash: string): void {
    const set = this.byAgent.get(agentId);
    if (!set) return;
    set.delete(hash);
    if (set.size === 0) this.byAgent.delete(agentId);
  }
}
