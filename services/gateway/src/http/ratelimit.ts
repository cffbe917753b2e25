import type { Request, RequestHandler, Response } from "express";
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  RLWrapperTimeouts,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import {
  ApsError,
  LIVE_KEY_PREFIX,
  TEST_KEY_PREFIX,
  rateLimitStoreFailures,
  unnamedStatements,
  type Database,
  type Logger,
} from "@aps/platform";
import { AUTH_RESULT, bearer } from "@aps/api/http/locals";
import { ACCESS_TOKEN_PREFIX } from "../oauth/store.js";
import type { KeyResolver } from "../cache/auth-cache.js";
import { BatchedCounter, DEFAULT_BATCH, type BatchOptions, type StoreCount } from "./rate-batch.js";
import { CoalescedRateStore } from "./rate-store.js";
import { clientSource, requestSource } from "@aps/api/http/client-source";

/** Length of every per-minute window, seconds (docs/design/edge.md#request-path "…_PER_MINUTE"). */
export const RATE_WINDOW_SECONDS = 60;

/** Table (in the gateway's own schema) holding the shared counters; created by the gateway's migration. */
export const RATE_LIMIT_TABLE = "rate_limits";

/**
 * The request-rate policies: per API key (its agent) and per client IP (docs/design/edge.md#request-path),
 * and per source for keyed requests (`source`: every key of one client /24 or /48 together,
 * docs/design/identity-and-abuse.md#budgets-per-source).
 */
export type RatePolicyName = "keyed" | "anon" | "source";

const POLICIES: readonly RatePolicyName[] = ["keyed", "anon", "source"];

/**
 * Requests allowed per window for each policy (`RATE_LIMIT_KEYED_PER_MINUTE`,
 * `RATE_LIMIT_ANON_PER_MINUTE`, `RATE_LIMIT_SOURCE_PER_MINUTE`). `sourcePerMinute` defaults to
 * 5 × `keyedPerMinute` (docs/design/identity-and-abuse.md#budgets-per-source).
 */
export interface RateLimits {
  keyedPerMinute: number;
  anonPerMinute: number;
  sourcePerMinute?: number;
}

/** The per-source budget when none is configured: five keys' worth (docs/design/identity-and-abuse.md#budgets-per-source). */
export const SOURCE_LIMIT_FACTOR = 5;

/**
 * Where the counters live: `memory` (one process only — the embedded all-in-one mode, where
 * exactly one gateway runs) or `postgres` (shared by every gateway replica). See
 * docs/design/identity-and-abuse.md#per-minute-request-limits.
 */
/**
 * Where counts are shared: this process only, or a PostgreSQL table every replica writes.
 * `timeoutMs`: the budget of one store call before the per-process fallback answers (default
 * STORE_TIMEOUT_MS); a test that must tell a failing statement from a slow machine gives more.
 * `pooler` (DATABASE_POOLER): behind `transaction` no statement is named (unnamedStatements).
 */
export type RateStore =
  | { kind: "memory" }
  | ({ kind: "postgres"; schema: string; timeoutMs?: number | undefined } & Pick<Database, "pool" | "pooler">);

/** What one partition (an agent or an IP) has left in its current window. */
export interface RateState {
  policy: RatePolicyName;
  /** Requests allowed per window. */
  limit: number;
  /** Requests counted in the current window (may exceed `limit` once refused requests are counted). */
  used: number;
  remaining: number;
  /** Seconds until the window resets (≥ 0; 0 when no window is open). */
  resetSeconds: number;
}

/** Budget of one shared-store call before the per-process fallback answers instead, ms (a refused connection fails at once; this bounds a hanging one). */
const STORE_TIMEOUT_MS = 2_000;

/**
 * Per-minute request rate limits enforced in the gateway with `rate-limiter-flexible`
 * (docs/design/edge.md#request-path "Rate limits"): fixed 60-s windows counted per agent for requests that carry a
 * valid API key (policy `keyed`) and per client IP (`req.ip`, which honours TRUSTED_PROXIES)
 * for everything else (policy `anon`); a keyed request is also counted per source (policy
 * `source`: `requestSource(req, agentId)`, the client's /24 or /48, a loopback client per agent —
 * docs/design/identity-and-abuse.md), so many keys of one operator share one budget. With a PostgreSQL store the counters are shared by every
 * replica, counted locally and reconciled in batches (docs/design/identity-and-abuse.md#counting-across-replicas: no database write per
 * request; exact while fewer than `headroom` requests are left in a window); when the store fails
 * or takes longer than 2 s, an in-memory limiter of the same size answers for this replica
 * (degraded, never unlimited and never a 503 — docs/design/identity-and-abuse.md#per-minute-request-limits), counted in
 * `aps_rate_limit_store_failures_total` and logged (one warning per 10 s).
 * The partition keys are agent ids and IPs: an API key is never stored.
 */
export class RequestRateLimiter {
  /** Per policy: the shared store (PostgreSQL, timeout-wrapped) or undefined in memory mode. */
  private readonly shared: Record<RatePolicyName, RateLimiterAbstract | undefined>;
  /** Per policy: this process's counters (the store in memory mode, the fallback otherwise). */
  private readonly local: Record<RatePolicyName, RateLimiterAbstract>;
  /** Per policy: local counting in front of the shared store (postgres mode only). */
  private readonly batched: Record<RatePolicyName, BatchedCounter> | undefined;
  /** Requests allowed per window, per policy. */
  private readonly points: Record<RatePolicyName, number>;
  /** Counts added to the shared store, every policy's, in group commits (postgres mode only; docs/design/identity-and-abuse.md#counting-across-replicas). */
  private readonly counts: CoalescedRateStore | undefined;
  private lastWarning = 0;
  /** Budget of one shared-store call, ms (the store's `timeoutMs`, else STORE_TIMEOUT_MS). */
  private readonly storeTimeoutMs: number;

  /**
   * @param log receives one warning per 10 s while the shared store fails.
   * @param batching batch size, headroom and reconciliation interval of the shared store (DEFAULT_BATCH).
   */
  constructor(
    readonly limits: RateLimits,
    store: RateStore,
    private readonly log?: Logger,
    batching: Partial<BatchOptions> = {},
  ) {
    this.storeTimeoutMs = (store.kind === "postgres" ? store.timeoutMs : undefined) ?? STORE_TIMEOUT_MS;
    this.points = {
      keyed: limits.keyedPerMinute,
      anon: limits.anonPerMinute,
      source: limits.sourcePerMinute ?? SOURCE_LIMIT_FACTOR * limits.keyedPerMinute,
    };
    const each = <T>(make: (policy: RatePolicyName) => T) =>
      Object.fromEntries(POLICIES.map((p) => [p, make(p)])) as Record<RatePolicyName, T>;
    this.local = each(
      (p) => new RateLimiterMemory({ keyPrefix: p, points: this.points[p], duration: RATE_WINDOW_SECONDS }),
    );
    this.shared = each((p) =>
      store.kind === "memory" ? undefined : shared(p, this.points[p], store, this.storeTimeoutMs),
    );
    this.counts =
      store.kind === "memory"
        ? undefined
        : new CoalescedRateStore(
            store.pool,
            `"${store.schema.replace(/"/g, '""')}"."${RATE_LIMIT_TABLE}"`,
            RATE_WINDOW_SECONDS * 1000,
            this.storeTimeoutMs,
          );
    const opts = { ...DEFAULT_BATCH, ...batching };
    this.batched =
      store.kind === "memory"
        ? undefined
        : each(
            (p) =>
              new BatchedCounter(
                this.points[p],
                (partition, n) => this.count(p, partition, n),
                opts,
                RATE_WINDOW_SECONDS * 1000,
              ),
          );
  }

  /** Sends the counts still pending to the shared store and stops reconciling (gateway stop). */
  async close(): Promise<void> {
    if (this.batched) await Promise.all(POLICIES.map((p) => this.batched![p].close()));
  }

  /** Limit of `policy`, requests per window. */
  limitOf(policy: RatePolicyName): number {
    return this.points[policy];
  }

  /**
   * Counts one request of `partition` under `policy`. Resolves with the state after counting
   * and `allowed` false when this request is over the limit (the caller answers 429).
   */
  async consume(policy: RatePolicyName, partition: string): Promise<RateState & { allowed: boolean }> {
    const batched = this.batched?.[policy];
    if (batched) {
      const c = await batched.consume(partition);
      const limit = this.limitOf(policy);
      return {
        policy,
        limit,
        used: c.used,
        remaining: Math.max(0, limit - c.used),
        resetSeconds: Math.max(0, Math.ceil(c.resetMs / 1000)),
        allowed: c.allowed,
      };
    }
    try {
      const r = await this.withFallback(policy, (l) => l.consume(partition, 1));
      return { ...this.state(policy, r), allowed: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { ...this.state(policy, err), allowed: false };
      throw err;
    }
  }

  /**
   * The current state of `partition` under `policy` without counting anything: the shared count
   * plus what this replica admitted and has not sent yet.
   */
  async peek(policy: RatePolicyName, partition: string): Promise<RateState> {
    const r = await this.withFallback(policy, (l) => l.get(partition));
    const pending = this.batched?.[policy].pendingOf(partition) ?? 0;
    if (!r) {
      const limit = this.limitOf(policy);
      return {
        policy,
        limit,
        used: pending,
        remaining: Math.max(0, limit - pending),
        resetSeconds: pending ? RATE_WINDOW_SECONDS : 0,
      };
    }
    const s = this.state(policy, r);
    return { ...s, used: s.used + pending, remaining: Math.max(0, s.limit - s.used - pending) };
  }

  /**
   * Adds `points` to the shared count of `partition` (one row of a group-committed statement,
   * docs/design/identity-and-abuse.md#counting-across-replicas), or to this process's fallback when the store fails or takes longer than
   * the store's timeout (STORE_TIMEOUT_MS unless configured).
   */
  private async count(policy: RatePolicyName, partition: string, points: number): Promise<StoreCount> {
    const answer = (r: RateLimiterRes, isShared: boolean): StoreCount => ({
      consumedPoints: r.consumedPoints,
      msBeforeNext: r.msBeforeNext,
      shared: isShared,
    });
    try {
      return await withTimeout(this.counts!.add(`${policy}:${partition}`, points), this.storeTimeoutMs);
    } catch (err) {
      this.storeFailed(err);
    }
    try {
      return answer(await this.local[policy].consume(partition, points), false);
    } catch (err) {
      if (err instanceof RateLimiterRes) return answer(err, false);
      throw err;
    }
  }

  private storeFailed(err: unknown): void {
    rateLimitStoreFailures.inc();
    if (Date.now() - this.lastWarning > 10_000) {
      this.lastWarning = Date.now();
      this.log?.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "rate-limit store failed; counting in this process until it answers again",
      );
    }
  }

  /** Runs `op` on the shared store; on a store failure (not a refusal) counts it and runs `op` locally. */
  private async withFallback<T>(policy: RatePolicyName, op: (l: RateLimiterAbstract) => Promise<T>): Promise<T> {
    const shared = this.shared[policy];
    if (!shared) return op(this.local[policy]);
    try {
      return await op(shared);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw err;
      this.storeFailed(err);
      return op(this.local[policy]);
    }
  }

  private state(policy: RatePolicyName, r: RateLimiterRes): RateState {
    const limit = this.limitOf(policy);
    const used = r.consumedPoints;
    return {
      policy,
      limit,
      used,
      remaining: Math.max(0, limit - used),
      resetSeconds: Math.max(0, Math.ceil(r.msBeforeNext / 1000)),
    };
  }
}

/** `p`, or a rejection once `ms` have passed without it settling. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate-limit store took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * The shared PostgreSQL counters of `policy` as rate-limiter-flexible reads them (`peek`) and
 * purges them, each call bounded by `timeoutMs`; counts are added by CoalescedRateStore.
 */
function shared(
  policy: RatePolicyName,
  points: number,
  store: Extract<RateStore, { kind: "postgres" }>,
  timeoutMs: number,
): RateLimiterAbstract {
  const pgLimiter = new RateLimiterPostgres({
    storeClient: store.pooler === "transaction" ? unnamedStatements(store.pool) : store.pool,
    storeType: "pool",
    schemaName: store.schema,
    tableName: RATE_LIMIT_TABLE,
    tableCreated: true,
    keyPrefix: policy,
    points,
    duration: RATE_WINDOW_SECONDS,
    // Expired rows are purged by the limiter itself (rows expired for an hour, every 5 minutes).
    clearExpiredByTimeout: true,
  });
  return new RLWrapperTimeouts({ limiter: pgLimiter, timeoutMs });
}

/** Which policy and partition a request counts against (see `RequestRateLimiter`). */
export interface RatePartition {
  policy: "keyed" | "anon";
  /** `ext_…` agent id for `keyed`, the client IP for `anon`. */
  partition: string;
  /** For `keyed`: the source it is also counted against (`abuseSource`, docs/design/identity-and-abuse.md#budgets-per-source). */
  source?: string;
}

/**
 * `RateLimit-Policy` and `RateLimit` field values of draft-ietf-httpapi-ratelimit-headers-10
 * (§3, §4): `"keyed";q=600;w=60` and `"keyed";r=599;t=42` (policy name as an sf-string,
 * q = quota, w = window s, r = remaining, t = seconds to reset).
 */
export function rateLimitHeaderValues(s: RateState): { policy: string; limit: string } {
  return {
    policy: `"${s.policy}";q=${s.limit};w=${RATE_WINDOW_SECONDS}`,
    limit: `"${s.policy}";r=${s.remaining};t=${s.resetSeconds}`,
  };
}

/** Paths that are counted against nobody (orchestrator probes); they still get the headers. */
const UNCOUNTED = new Set(["/healthz", "/readyz"]);

/**
 * The header a web page's own `/v1` calls carry (packages/web reads the API over HTTP,
 * docs/design/edge.md#web-pages): with the gateway process's secret value they are counted against nobody, since
 * the page request that made them was counted against its visitor already (docs/design/edge.md#web-pages "rate
 * limits"). Any other value, or none, is counted as usual.
 */
export const PAGE_CALL_HEADER = "x-aps-page-call";

/**
 * Whether a request carries this process's page-call `secret` in {@link PAGE_CALL_HEADER}
 * (constant-time compare); always false without a secret.
 */
export function isPageCall(req: IncomingMessage, secret: Buffer | undefined): boolean {
  if (!secret) return false;
  const v = req.headers[PAGE_CALL_HEADER];
  if (typeof v !== "string") return false;
  const got = Buffer.from(v);
  return got.length === secret.length && timingSafeEqual(got, secret);
}

/** The binding state of one request after it was counted: the policy's state and whether it is admitted. */
export type CountedRequest = RateState & { allowed: boolean };

/** Where a count made before express travels with its request (see `handOffCount`). */
const COUNTED = Symbol("aps.rateLimit.counted");

/**
 * Records that `req` was counted already, as `counted`, before it was handed to express: the
 * read-cache shortcut counts a request before it knows whether it can answer it
 * (docs/design/edge.md#read-cache-shortcut); when it cannot, `rateLimit` answers from this count
 * instead of counting the request twice.
 */
export function handOffCount(req: IncomingMessage, counted: CountedRequest): void {
  (req as unknown as Record<symbol, CountedRequest>)[COUNTED] = counted;
}

/**
 * Counts an anonymous request from `address` (the client IP as `req.ip` gives it) against its
 * partition, or only peeks at it for a web page's own call (`peekOnly`): what `rateLimit` does for
 * a request without a key, for the read-cache shortcut.
 */
export function countAnonymous(
  limiter: RequestRateLimiter,
  address: string | undefined,
  peekOnly: boolean,
): Promise<CountedRequest> {
  return countOrPeek(limiter, { policy: "anon", partition: clientSource(address) }, peekOnly);
}

/**
 * Counts a request of `agentId` (its key resolved) against the agent and, when admitted, against
 * its abuse `source`; only peeks for a web page's own call (`peekOnly`): what `rateLimit` does for
 * a request with a valid key, for the read-cache shortcut.
 */
export function countKeyed(
  limiter: RequestRateLimiter,
  agentId: string,
  source: string,
  peekOnly: boolean,
): Promise<CountedRequest> {
  return countOrPeek(limiter, { policy: "keyed", partition: agentId, source }, peekOnly);
}

/** The words a 429 uses for the budget of `policy` that ran out. */
const BUDGET_OF: Record<RatePolicyName, string> = {
  keyed: "API key",
  anon: "client address",
  source: "client source (every API key from this network, its /24 or /48, together)",
};

/**
 * Express middleware for every response (root and /v1): decides the partition, counts the
 * request, sets `RateLimit-Policy`/`RateLimit`, and answers 429 `rate_limited` problem+json
 * with `Retry-After` (s, docs/design/edge.md#request-path) over the limit. A keyed request admitted by its
 * key's budget is then counted against its source (docs/design/identity-and-abuse.md#budgets-per-source); a request
 * refused by the key's budget is not, so one runaway key does not spend its neighbours' budget.
 * The headers describe the binding policy: the one that refused the request, otherwise the one
 * with fewer requests left (the key's on a tie), one policy per header as before.
 *
 * A request with `Authorization: Bearer <key>` is resolved here through `identity` (the gateway's
 * authentication cache in front of the identity service, docs/design/edge.md#authentication-cache; the result is kept in
 * `res.locals` so `authenticate` does not ask twice); a valid key counts
 * against its agent, anything else (no key, malformed header, a token that is neither `sk_src_…` nor an OAuth access token `aps_at_…`,
 * unknown or revoked key, identity down) against the client IP — so sending random keys does not
 * buy a fresh budget. A web page's own `/v1` calls carrying `pageCallSecret` in
 * {@link PAGE_CALL_HEADER} are not counted (the page request was).
 */
export function rateLimit(
  limiter: RequestRateLimiter,
  identity: KeyResolver,
  log: Logger,
  pageCallSecret?: string,
): RequestHandler {
  const secret = pageCallSecret ? Buffer.from(pageCallSecret) : undefined;
  return (req, res, next) => {
    const counted = (req as unknown as Record<symbol, CountedRequest | undefined>)[COUNTED];
    (counted
      ? Promise.resolve(counted)
      : partitionOf(req, res, identity).then((p) =>
          countOrPeek(limiter, p, UNCOUNTED.has(req.path) || isPageCall(req, secret)),
        )
    )
      .then((s) => {
        const h = rateLimitHeaderValues(s);
        res.setHeader("RateLimit-Policy", h.policy);
        res.setHeader("RateLimit", h.limit);
        if (!s.allowed) {
          next(
            new ApsError(
              "rate_limited",
              `rate limit reached: at most ${s.limit} requests per ${RATE_WINDOW_SECONDS} s for this ${BUDGET_OF[s.policy]}`,
              Math.max(1, s.resetSeconds),
            ),
          );
          return;
        }
        next();
      })
      .catch((err: unknown) => {
        // Both stores failing is a bug, not an outage (the memory limiter cannot fail): log, let the request through.
        log.error({ err: String(err) }, "rate limiter failed; request not counted");
        next();
      });
  };
}

/** The partition of a request whose key resolved to `agentId`, with its abuse source. */
function keyedPartition(req: Request, agentId: string): RatePartition {
  return { policy: "keyed", partition: agentId, source: requestSource(req, agentId) };
}

/**
 * Counts (or, for uncounted probe paths, only peeks at) the request under its partition and, when
 * keyed and admitted, under its source; answers the binding state (see `rateLimit`).
 */
async function countOrPeek(limiter: RequestRateLimiter, p: RatePartition, peekOnly: boolean): Promise<CountedRequest> {
  const own = peekOnly
    ? { ...(await limiter.peek(p.policy, p.partition)), allowed: true }
    : await limiter.consume(p.policy, p.partition);
  if (!own.allowed || p.source === undefined) return own;
  const src = peekOnly
    ? { ...(await limiter.peek("source", p.source)), allowed: true }
    : await limiter.consume("source", p.source);
  return !src.allowed || src.remaining < own.remaining ? src : own;
}

/**
 * Resolves the caller's key once per request. Stores `{agent}` or `{error}` under
 * `res.locals[AUTH_RESULT]` for `authenticate`, and returns the partition to count against.
 */
async function partitionOf(req: Request, res: Response, identity: KeyResolver): Promise<RatePartition> {
  // computed only for anonymous callers (keyed ones are counted per agent)
  const anon = (): RatePartition => ({ policy: "anon", partition: clientSource(req.ip ?? req.socket.remoteAddress) });
  // resolved before express by the read-cache shortcut, which then left the request to the app
  const known = res.locals[AUTH_RESULT] as { agent?: { agentId: string } } | undefined;
  if (known) return known.agent ? keyedPartition(req, known.agent.agentId) : anon();
  let key: string | undefined;
  try {
    key = bearer(req);
  } catch {
    return anon();
  }
  // Only API-key-shaped tokens go to the identity service (an admin token is never sent there),
  // and OAuth access tokens to the token store (docs/design/agents.md#oauth-for-mcp).
  if (
    key === undefined ||
    !(key.startsWith(LIVE_KEY_PREFIX) || key.startsWith(TEST_KEY_PREFIX) || key.startsWith(ACCESS_TOKEN_PREFIX))
  )
    return anon();
  try {
    const agent = await identity.authenticate(key);
    res.locals[AUTH_RESULT] = { agent };
    return keyedPartition(req, agent.agentId);
  } catch (error) {
    res.locals[AUTH_RESULT] = { error };
    return anon();
  }
}
