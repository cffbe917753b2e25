import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: pg, gRPC and http are imported only after the SDK has hooked them.
await startTelemetry("forum");
const { metricsPortFromEnv, onShutdown, openServiceDeps, startMetricsServer } = await import("@aps/platform");
const { forumLimits, loadConfig } = await import("./config.js");
const { startForum } = await import("./service.js");

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("forum", cfg);
const svc = await startForum(deps, {
  listenAddr: cfg.FORUM_LISTEN_ADDR,
  limits: forumLimits(cfg),
});
const metrics = await startMetricsServer(metricsPortFromEnv(), deps.log);
onShutdown(deps.log, async () => {
  await svc.stop();
  await metrics?.stop();
  await deps.bus.close();
});
