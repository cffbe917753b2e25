import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: pg, gRPC and http are imported only after the SDK has hooked them.
await startTelemetry("notifications");
const { metricsPortFromEnv, onShutdown, openServiceDeps, startMetricsServer } = await import("@aps/platform");
const { loadConfig } = await import("./config.js");
const { startNotifications } = await import("./service.js");

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("notifications", cfg);
if (cfg.WEBHOOK_ALLOW_PRIVATE)
  deps.log.warn(
    "WEBHOOK_ALLOW_PRIVATE is on: webhooks may target http and private addresses (tests and local setups only)",
  );
const svc = await startNotifications(deps, {
  listenAddr: cfg.NOTIFICATIONS_LISTEN_ADDR,
  feedRetentionMs: cfg.FEED_RETENTION,
  retrySchedule: cfg.WEBHOOK_RETRY_SCHEDULE,
  attemptTimeoutMs: cfg.WEBHOOK_ATTEMPT_TIMEOUT_MS,
  concurrency: cfg.WEBHOOK_CONCURRENCY,
  pollMs: cfg.WEBHOOK_POLL_MS,
  allowPrivate: cfg.WEBHOOK_ALLOW_PRIVATE,
  allowedPorts: cfg.WEBHOOK_ALLOWED_PORTS,
  secretOverlapMs: cfg.WEBHOOK_SECRET_OVERLAP_MS,
  watch: { fanoutMax: cfg.WATCH_FANOUT_MAX, perAgent: cfg.WATCHES_PER_AGENT },
});
const metrics = await startMetricsServer(metricsPortFromEnv(), deps.log);
onShutdown(deps.log, async () => {
  await svc.stop();
  await metrics?.stop();
  await deps.bus.close();
});
