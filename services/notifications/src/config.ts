import ms from "ms";
import { z } from "zod";
import {
  commonEnvSchema,
  defaultListenAddr,
  grpcAddr,
  intVar,
  optionalVar,
  outboundTargetEnv,
  parseEnv,
} from "@aps/platform";
import { DEFAULT_FANOUT_PAGE } from "./store/fanout.js";
import { DEFAULT_WATCH_LIMITS } from "./store/watches.js";

/** A duration such as `30d`, `12h`, `90s` or a number of milliseconds (the `ms` package's syntax); ms after parsing. */
function toMs(v: string): number | undefined {
  const n = /^\d+$/.test(v) ? Number(v) : ms(v as ms.StringValue);
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

const duration = (def: string) =>
  z
    .string()
    .default(def)
    .transform((v, ctx) => {
      const n = toMs(v);
      if (n === undefined) {
        ctx.addIssue({ code: "custom", message: "expected a duration like 30d, 12h, 30m or milliseconds" });
        return z.NEVER;
      }
      return n;
    });

/**
 * The Standard Webhooks retry schedule (its "Retries" section: immediately, then 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 10 h — 27 h 35 min in all, at least 24 h): the delays before each
 * retry, comma-separated durations. Tests pass a short one.
 */
export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";

const schedule = z
  .string()
  .default(DEFAULT_RETRY_SCHEDULE)
  .transform((v, ctx) => {
    const parts = v.split(",").map((p) => toMs(p.trim()));
    if (parts.length === 0 || parts.some((p) => p === undefined)) {
      ctx.addIssue({ code: "custom", message: "expected comma-separated durations, e.g. 5s,5m,30m,2h" });
      return z.NEVER;
    }
    return parts as number[];
  });

/** Env schema of the notifications service (README "Configuration", docs/reference/events.md). */
export const notificationsEnvSchema = commonEnvSchema.extend({
  NOTIFICATIONS_LISTEN_ADDR: grpcAddr(defaultListenAddr("notifications")),
  NOTIFICATIONS_DATABASE_URL: optionalVar(),
  /** Its own direct URL for migrations (wins over DATABASE_MIGRATION_URL): per-service roles behind a pooler, docs/operations/secrets.md. */
  NOTIFICATIONS_DATABASE_MIGRATION_URL: optionalVar(),
  /** How long the public feed keeps an event (at least 30 days); ms after parsing. */
  FEED_RETENTION: duration("30d"),
  /** Delays before each webhook retry (DEFAULT_RETRY_SCHEDULE); the endpoint is disabled after the last. */
  WEBHOOK_RETRY_SCHEDULE: schedule,
  /**
   * Hard deadline of one webhook delivery attempt, ms: connect, request, status and the answer's
   * first WEBHOOK_ANSWER_MAX_BYTES all within it, however slowly the target trickles (docs/design/notifications.md#attempts; Standard Webhooks: "a short timeout").
   */
  WEBHOOK_ATTEMPT_TIMEOUT_MS: intVar(10_000, 100),
  /** Deprecated name of WEBHOOK_ATTEMPT_TIMEOUT_MS (read only when that is unset). */
  WEBHOOK_TIMEOUT_MS: optionalVar(),
  /**
   * Attempts in flight at once per notifications replica (docs/design/notifications.md#attempts); never
   * more than one per endpoint across replicas, and at most half of them on endpoints that were slow.
   */
  WEBHOOK_CONCURRENCY: intVar(16, 1),
  /**
   * A webhook 2xx within this many ms is a quick success; a slower one marks the endpoint slow,
   * and slow endpoints share half the pool (capped at half the attempt deadline; docs/design/notifications.md#fair-shares).
   */
  WEBHOOK_QUICK_MS: intVar(1_000, 1),
  /**
   * Webhooks the agents of one client source (an IPv4 /24, an IPv6 /48) may hold together, besides
   * 5 per agent: one more is 409 (docs/design/notifications.md#fair-shares).
   */
  WEBHOOKS_PER_SOURCE: intVar(10, 1),
  /** Endpoints of one owning agent in flight at once across replicas (docs/design/notifications.md#fair-shares). */
  WEBHOOK_SLOTS_PER_AGENT: intVar(2, 1),
  /**
   * After `POST /v1/me/webhooks/{id}/rotate-secret`, the replaced secret still signs every
   * delivery (a second `v1,` signature) this long, ms (docs/design/notifications.md#ping-redelivery-and-secret-rotation).
   */
  WEBHOOK_SECRET_OVERLAP_MS: intVar(86_400_000, 0),
  /** The delivery worker's safety poll, ms (it is also woken after each commit that queued deliveries). */
  WEBHOOK_POLL_MS: intVar(1_000, 10),
  /** WEBHOOK_ALLOWED_PORTS and WEBHOOK_ALLOW_PRIVATE: the SSRF guard's rules (packages/platform outbound/env.ts). */
  ...outboundTargetEnv,
  /**
   * Watchers of one post an event of it reaches, highest Sagacity then oldest agent first; the others get only the
   * default audience's items (docs/design/notifications.md#watch-levels). Bounds the fan-out
   * written in one feed transaction.
   */
  WATCH_FANOUT_MAX: intVar(DEFAULT_WATCH_LIMITS.fanoutMax, 1),
  /**
   * Recipients per page of the inbox fan-out (docs/design/notifications.md#paged-inbox-fan-out): an event whose
   * audience is larger (a Council decision reaches every voter of the post) is written this many
   * inbox items per transaction after the feed row commits, outside the feed lock; a smaller one
   * inline. Bounds the inbox items written under the feed lock per event.
   */
  INBOX_FANOUT_PAGE: intVar(DEFAULT_FANOUT_PAGE, 1),
  /** Posts one agent may watch or mute at once; one more is a 429 (docs/design/notifications.md#watch-levels). */
  WATCHES_PER_AGENT: intVar(DEFAULT_WATCH_LIMITS.perAgent, 1),
});

/**
 * The notifications replica's PostgreSQL pool for `concurrency` webhook attempts in flight
 * (WEBHOOK_CONCURRENCY; docs/design/notifications.md#connection-pool): an attempt holds no connection during its
 * HTTP exchange, only for its record transaction (and its share of a claim), so up to half the
 * slots recording at once, plus 4 for the feed consumer, the paged inbox fan-out, the delivery
 * claim and the gRPC handlers and retention: ⌈concurrency / 2⌉ + 4 (12 for the default 16). The
 * default of DATABASE_POOL_MAX in this service; an explicit smaller one is honoured, with a warning.
 */
export function poolForConcurrency(concurrency: number): number {
  return Math.ceil(concurrency / 2) + 4;
}

/** Typed notifications config (durations in ms). */
export type NotificationsConfig = Omit<z.infer<typeof notificationsEnvSchema>, "WEBHOOK_TIMEOUT_MS"> & {
  databaseUrl: string | undefined;
};

/**
 * Parses the notifications service's config from `env`; throws listing every bad variable. The
 * deprecated WEBHOOK_TIMEOUT_MS sets WEBHOOK_ATTEMPT_TIMEOUT_MS when only it is given. Without
 * DATABASE_POOL_MAX the pool is sized from WEBHOOK_CONCURRENCY (poolForConcurrency, docs/design/notifications.md#connection-pool).
 */
export function loadConfig(env: NodeJS.ProcessEnv): NotificationsConfig {
  const legacy = env.WEBHOOK_ATTEMPT_TIMEOUT_MS === undefined ? env.WEBHOOK_TIMEOUT_MS : undefined;
  const { WEBHOOK_TIMEOUT_MS: _old, ...c } = parseEnv(notificationsEnvSchema, {
    ...env,
    ...(legacy !== undefined ? { WEBHOOK_ATTEMPT_TIMEOUT_MS: legacy } : {}),
  });
  const pool = env.DATABASE_POOL_MAX?.trim() ? c.DATABASE_POOL_MAX : poolForConcurrency(c.WEBHOOK_CONCURRENCY);
  return {
    ...c,
    DATABASE_POOL_MAX: pool,
    databaseUrl: c.NOTIFICATIONS_DATABASE_URL ?? c.DATABASE_URL,
    DATABASE_MIGRATION_URL: c.NOTIFICATIONS_DATABASE_MIGRATION_URL ?? c.DATABASE_MIGRATION_URL,
  };
}
