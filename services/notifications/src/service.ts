import { fileURLToPath } from "node:url";
import {
  startService,
  type LocalEndpoint,
  type RetentionRule,
  type Resolver,
  type RetentionSettings,
  type ServiceDeps,
  startWithServiceDeps,
  type ApsGrpcService,
  migrateSchema,
  PLATFORM_MIGRATIONS_DIR,
} from "@aps/platform";
import { notifications } from "@aps/proto";
import { loadConfig, poolForConcurrency, type NotificationsConfig } from "./config.js";
import { consumeAudit } from "./events/audit.js";
import { consumeFeed } from "./events/feed.js";
import { notificationsHandlers, type NotificationsStores } from "./grpc/handlers.js";
import { AuditStore } from "./store/audit.js";
import { DEFAULT_FANOUT_PAGE, FanoutWorker } from "./store/fanout.js";
import { FeedStore } from "./store/feed.js";
import { InboxStore } from "./store/inbox.js";
import { DEFAULT_WATCH_LIMITS, WatchStore, type WatchLimits } from "./store/watches.js";
import { WebhookStore } from "./store/webhooks.js";
import { DeliveryWorker } from "./webhooks/worker.js";

// The same relative place in src/ and dist/ (the build copies the SQL files there), so the service runs from either.
const MIGRATIONS_DIR = fileURLToPath(new URL("./store/migrations", import.meta.url));

/**
 * Retention of the notifications tables that only grow (docs/retention.md,
 * docs/design/operations.md#retention): the public feed after FEED_RETENTION (by recorded_at; the cursor sequence is
 * never lowered, so a pruned cursor stays valid and one past the newest is still refused), inbox
 * items after RETENTION_INBOX (a trigger marks pruned items read, so unread counts only what is
 * left), and finished webhook deliveries after RETENTION_DELIVERIES (pending ones stay whatever
 * their age: they are the queue).
 */
export function notificationsRetentionRules(s: RetentionSettings, feedRetentionMs: number): RetentionRule[] {
  return [
    { table: "feed_events", column: "recorded_at", olderThanMs: feedRetentionMs },
    { table: "inbox_items", column: "occurred_at", olderThanMs: s.inboxMs },
    { table: "webhook_deliveries", column: "created_at", olderThanMs: s.deliveriesMs, where: "t.status <> 'pending'" },
  ];
}

/** What `startNotifications` needs beyond the shared deps (the service's config, docs/reference/events.md). */
export interface NotificationsOptions {
  listenAddr: string;
  /** APS_LIVEMODE: false in a sandbox, whose webhook bodies carry `livemode: false` (docs/design/agents.md#sandbox); default true. */
  livemode?: boolean;
  /** FEED_RETENTION, ms (the retention job's rule for feed_events, docs/design/operations.md#retention). */
  feedRetentionMs: number;
  /** WEBHOOK_RETRY_SCHEDULE, ms each. */
  retrySchedule: number[];
  /** WEBHOOK_ATTEMPT_TIMEOUT_MS: hard deadline of one attempt (docs/design/notifications.md#attempts). */
  attemptTimeoutMs: number;
  /** WEBHOOK_CONCURRENCY: attempts in flight at once in this replica (docs/design/notifications.md#attempts). */
  concurrency: number;
  /** WEBHOOK_QUICK_MS: the quick-success bound, ms (docs/design/notifications.md#fair-shares); QUICK_MS when absent. */
  quickMs?: number;
  /** WEBHOOKS_PER_SOURCE: webhooks one client source may hold (docs/design/notifications.md#fair-shares); unbounded when absent. */
  webhooksPerSource?: number;
  /** WEBHOOK_SLOTS_PER_AGENT: one agent's endpoints in flight at once (docs/design/notifications.md#fair-shares); SLOTS_PER_AGENT when absent. */
  slotsPerAgent?: number;
  /** WEBHOOK_POLL_MS. */
  pollMs: number;
  /** WEBHOOK_ALLOW_PRIVATE (tests and local setups only). */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_PORTS. */
  allowedPorts: readonly number[];
  /** WEBHOOK_SECRET_OVERLAP_MS: a rotated-out secret still signs this long, ms (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
  secretOverlapMs: number;
  /** DNS seam of the SSRF guard (tests). */
  resolve?: Resolver;
  /** WATCH_FANOUT_MAX and WATCHES_PER_AGENT (docs/design/notifications.md#watch-levels); DEFAULT_WATCH_LIMITS when absent. */
  watch?: WatchLimits;
  /** INBOX_FANOUT_PAGE: recipients per page of a paged inbox fan-out (docs/design/notifications.md#paged-inbox-fan-out); DEFAULT_FANOUT_PAGE when absent. */
  fanoutPage?: number;
}

/** A running notifications service. */
export interface NotificationsHandle {
  port: number;
  repo: NotificationsStores;
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<typeof notifications.NotificationsServiceDefinition>;
  stop(): Promise<void>;
}

/**
 * Starts the notifications service on the service template (docs/design/services.md#start-and-stop-order): migrations, gRPC
 * (+ health), then the audit log's consumer (docs/design/identity-and-abuse.md#audit-log), the feed consumer of every public event, the webhook delivery worker, the
 * paged inbox fan-out (docs/design/notifications.md#paged-inbox-fan-out) and the retention of the feed, inbox and deliveries (docs/design/notifications.md#ingest, docs/design/operations.md#retention).
 */
export async function startNotifications(deps: ServiceDeps, opts: NotificationsOptions): Promise<NotificationsHandle> {
  const watch = opts.watch ?? DEFAULT_WATCH_LIMITS;
  const policy = {
    allowPrivate: opts.allowPrivate,
    allowedPorts: opts.allowedPorts,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  };
  const worker = new DeliveryWorker(
    deps.db.pool,
    {
      retrySchedule: opts.retrySchedule,
      attemptTimeoutMs: opts.attemptTimeoutMs,
      concurrency: opts.concurrency,
      pollMs: opts.pollMs,
      policy,
      ...(opts.quickMs === undefined ? {} : { quickMs: opts.quickMs }),
      ...(opts.slotsPerAgent === undefined ? {} : { slotsPerAgent: opts.slotsPerAgent }),
      livemode: opts.livemode ?? true,
    },
    deps.log,
  );
  const fanoutPage = opts.fanoutPage ?? DEFAULT_FANOUT_PAGE;
  const fanout = new FanoutWorker(deps.db.pool, { pageSize: fanoutPage, pollMs: opts.pollMs }, deps.log);
  return startService(deps, {
    migrationsDir: MIGRATIONS_DIR,
    listenAddr: opts.listenAddr,
    service: { grpc: notifications.NotificationsServiceService, generic: notifications.NotificationsServiceDefinition },
    repository: () => ({
      feed: new FeedStore(deps.db.pool),
      inbox: new InboxStore(deps.db.pool),
      webhooks: new WebhookStore(deps.db.pool, () => worker.notify(), opts.livemode ?? true),
      watches: new WatchStore(deps.db.pool, watch),
      audit: new AuditStore(deps.db.pool),
    }),
    handlers: (repo) =>
      notificationsHandlers(repo, policy, deps.log, {
        secretOverlapMs: opts.secretOverlapMs,
        ...(opts.webhooksPerSource === undefined ? {} : { perSource: opts.webhooksPerSource }),
      }),
    background: async (repo) => {
      const audit = await consumeAudit(deps.bus, repo.audit);
      const feed = await consumeFeed(
        deps.bus,
        deps.db.pool,
        () => worker.feedAdvanced(),
        deps.log,
        Date.now,
        watch.fanoutMax,
        { page: fanoutPage, wake: () => fanout.notify() },
      );
      worker.start();
      fanout.start();
      return [audit, feed, worker, fanout];
    },
    retention: (s) => notificationsRetentionRules(s, opts.feedRetentionMs),
  });
}

/**
 * The notifications service as every launcher runs it (docs/design/services.md#one-service-contract): its config (feed retention,
 * the webhook worker's schedule, timeouts and SSRF rules, watch limits) mapped to
 * {@link NotificationsOptions} once. Warns when WEBHOOK_ALLOW_PRIVATE is on, and when DATABASE_POOL_MAX
 * is below what WEBHOOK_CONCURRENCY needs (docs/design/notifications.md#connection-pool).
 */
export const notificationsService: ApsGrpcService<"notifications", NotificationsConfig> = {
  name: "notifications",
  loadConfig,
  migrate: ({ cfg, log }) => migrateSchema("notifications", cfg, log, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR]),
  start: (ctx) =>
    startWithServiceDeps("notifications", ctx, (deps) => {
      const cfg = ctx.cfg;
      if (cfg.DATABASE_POOL_MAX < poolForConcurrency(cfg.WEBHOOK_CONCURRENCY))
        deps.log.warn(
          { pool: cfg.DATABASE_POOL_MAX, concurrency: cfg.WEBHOOK_CONCURRENCY },
          `DATABASE_POOL_MAX ${cfg.DATABASE_POOL_MAX} is below ${poolForConcurrency(cfg.WEBHOOK_CONCURRENCY)} (⌈WEBHOOK_CONCURRENCY / 2⌉ + 4): webhook attempts will wait for connections to record their outcome (docs/design/notifications.md#connection-pool)`,
        );
      if (cfg.WEBHOOK_ALLOW_PRIVATE)
        deps.log.warn(
          "WEBHOOK_ALLOW_PRIVATE is on: webhooks may target http and private addresses (tests and local setups only)",
        );
      return startNotifications(deps, {
        listenAddr: ctx.listenAddr ?? cfg.NOTIFICATIONS_LISTEN_ADDR,
        livemode: cfg.APS_LIVEMODE,
        feedRetentionMs: cfg.FEED_RETENTION,
        retrySchedule: cfg.WEBHOOK_RETRY_SCHEDULE,
        attemptTimeoutMs: cfg.WEBHOOK_ATTEMPT_TIMEOUT_MS,
        concurrency: cfg.WEBHOOK_CONCURRENCY,
        quickMs: cfg.WEBHOOK_QUICK_MS,
        slotsPerAgent: cfg.WEBHOOK_SLOTS_PER_AGENT,
        webhooksPerSource: cfg.WEBHOOKS_PER_SOURCE,
        pollMs: cfg.WEBHOOK_POLL_MS,
        allowPrivate: cfg.WEBHOOK_ALLOW_PRIVATE,
        allowedPorts: cfg.WEBHOOK_ALLOWED_PORTS,
        secretOverlapMs: cfg.WEBHOOK_SECRET_OVERLAP_MS,
        watch: { fanoutMax: cfg.WATCH_FANOUT_MAX, perAgent: cfg.WATCHES_PER_AGENT },
        fanoutPage: cfg.INBOX_FANOUT_PAGE,
      });
    }),
};
