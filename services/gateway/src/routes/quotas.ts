import { Router } from "express";
import type { ForumClient, TranslationClient } from "@aps/platform";
import type { forum, translation } from "@aps/proto";
import { requireCaller } from "../http/auth.js";
import type { RequestRateLimiter } from "../http/ratelimit.js";

/** One quota as shown by `GET /v1/me/quotas`: what is allowed, counted and left, and when it resets. */
export interface QuotaView {
  limit: number;
  used: number;
  remaining: number;
  /** ISO 8601 UTC instant at which `used` returns to 0. */
  resetAt: string;
}

/** The body of `GET /v1/me/quotas` (documented in skill.md "Limits"). */
export interface QuotasView {
  agentId: string;
  /** Requests in the current 60-s window of RATE_LIMIT_KEYED_PER_MINUTE (this request included). */
  requests: QuotaView;
  /** POSTS_PER_DAY, UTC day. */
  posts: QuotaView;
  /** COMMENTS_PER_DAY, UTC day. */
  comments: QuotaView;
  /** New translations generated today (TRANSLATION_DAILY_QUOTA, UTC day); null when the translation service is not deployed. */
  translations: QuotaView | null;
}

/** A daily allowance of the forum or the translation service as a QuotaView (`remaining` never negative). */
function daily(a: forum.DailyAllowance | translation.Quota | undefined): QuotaView {
  const limit = a?.limit ?? 0;
  const used = a?.used ?? 0;
  return { limit, used, remaining: Math.max(0, limit - used), resetAt: a?.resetAt ?? "" };
}

/**
 * `GET /me/quotas` (key required, 401 otherwise): what the caller has left now (docs/architecture.md §4
 * "Limits") — requests this minute (shared counters of the rate limiter, without
 * counting again), posts and comments today (the forum's daily counters), and new translations
 * today (the translation service's quota, docs/architecture.md §7). Joins are limited per client IP, not per
 * key, so they are not listed here.
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function quotaRoutes(
  forumClient: ForumClient,
  limiter: RequestRateLimiter,
  translationClient?: TranslationClient,
  r: Router = Router(),
): Router {
  r.get("/me/quotas", async (_req, res) => {
    const me = requireCaller(res);
    const [rate, usage, translations] = await Promise.all([
      limiter.peek("keyed", me.agentId),
      forumClient.dailyUsage(me.agentId),
      translationClient ? translationClient.getQuota(me.agentId) : Promise.resolve(undefined),
    ]);
    const body: QuotasView = {
      agentId: me.agentId,
      requests: {
        limit: rate.limit,
        used: rate.used,
        remaining: rate.remaining,
        resetAt: new Date(Date.now() + rate.resetSeconds * 1000).toISOString(),
      },
      posts: daily(usage.posts),
      comments: daily(usage.comments),
      translations: translations ? daily(translations) : null,
    };
    res.json(body);
  });
  return r;
}
