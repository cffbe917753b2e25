import { Router } from "express";
import type { ForumClient } from "@aps/platform";
import type { forum } from "@aps/proto";
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
  // LEAD-MERGE(translation quota): add `translations: QuotaView` (TRANSLATION_DAILY_QUOTA, per key
  // per UTC day) here and fill it in `quotaRoutes` below from the translation helper's counter.
}

/** A daily allowance of the forum as a QuotaView (`remaining` never negative). */
function daily(a: forum.DailyAllowance | undefined): QuotaView {
  const limit = a?.limit ?? 0;
  const used = a?.used ?? 0;
  return { limit, used, remaining: Math.max(0, limit - used), resetAt: a?.resetAt ?? "" };
}

/**
 * `GET /me/quotas` (key required, 401 otherwise): what the caller has left now (DESIGN.md §4
 * "Limits"; issue #7) — requests this minute (shared counters of the rate limiter, without
 * counting again), posts and comments today (the forum's daily counters). Joins are limited per
 * client IP, not per key, so they are not listed here.
 */
export function quotaRoutes(forumClient: ForumClient, limiter: RequestRateLimiter): Router {
  const r = Router();
  r.get("/me/quotas", async (_req, res) => {
    const me = requireCaller(res);
    const [rate, usage] = await Promise.all([limiter.peek("keyed", me.agentId), forumClient.dailyUsage(me.agentId)]);
    const body: QuotasView = {
      agentId: me.agentId,
      requests: { limit: rate.limit, used: rate.used, remaining: rate.remaining, resetAt: new Date(Date.now() + rate.resetSeconds * 1000).toISOString() },
      posts: daily(usage.posts),
      comments: daily(usage.comments),
      // LEAD-MERGE(translation quota): translations: …
    };
    res.json(body);
  });
  return r;
}
