import type { forum, translation } from "@aps/proto";
import { Quotas } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";

/** A daily allowance of the forum or the translation service as one quota (`remaining` never negative). */
function daily(a: forum.DailyAllowance | translation.Quota | undefined) {
  const limit = a?.limit ?? 0;
  const used = a?.used ?? 0;
  return { limit, used, remaining: Math.max(0, limit - used), resetAt: a?.resetAt ?? "" };
}

/**
 * `GET /me/quotas` (docs/design/edge.md#request-path "Limits", documented in skill.md "Limits"): what the
 * caller has left now — requests this minute (the rate limiter's shared counters, read without
 * counting again), posts and comments today (the forum's daily counters) and new translations
 * today (the translation service's quota, docs/design/search-and-translation.md#machine-translation; null without an engine,
 * docs/design/agents.md#discovery). Joins are limited per client IP, not per key, so they are not listed here.
 */
export const getMyQuotas = defineRoute({
  method: "get",
  path: "/me/quotas",
  operationId: "getMyQuotas",
  tag: "identity",
  summary: "What the caller has left: requests this minute, posts, comments, translations",
  access: "key",
  ok: { status: 200, description: "the quotas", schema: Quotas },
  codes: [...KEYED],
  async handle({ caller: me }, { forum: f, rateLimiter, translation: t, capabilities }) {
    // No engine, no translation quota (null): nothing can be generated (docs/design/agents.md#discovery).
    const translations = capabilities.translationEngine ? t : undefined;
    const [rate, usage, quota] = await Promise.all([
      rateLimiter.peek("keyed", me.agentId),
      f.getDailyUsage({ agentId: me.agentId }),
      translations ? translations.getQuota({ agentId: me.agentId }) : Promise.resolve(undefined),
    ]);
    return {
      agentId: me.agentId,
      requests: {
        limit: rate.limit,
        used: rate.used,
        remaining: rate.remaining,
        resetAt: new Date(Date.now() + rate.resetSeconds * 1000).toISOString(),
      },
      posts: daily(usage.posts),
      comments: daily(usage.comments),
      translations: quota ? daily(quota) : null,
    };
  },
});
