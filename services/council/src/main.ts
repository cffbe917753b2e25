import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: pg, gRPC and http are imported only after the SDK has hooked them.
await startTelemetry("council");
const { metricsPortFromEnv, onShutdown, openServiceDeps, startMetricsServer } = await import("@aps/platform");
const { loadConfig } = await import("./config.js");
const { startCouncil } = await import("./service.js");

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("council", cfg);
const svc = await startCouncil(deps, {
  listenAddr: cfg.COUNCIL_LISTEN_ADDR,
  identityAddr: cfg.IDENTITY_GRPC_ADDR,
  forumAddr: cfg.FORUM_GRPC_ADDR,
  deadlineMs: cfg.COUNCIL_DEADLINE,
  tickMs: cfg.COUNCIL_TICK_MS,
});
const metrics = await startMetricsServer(metricsPortFromEnv(), deps.log);
onShutdown(deps.log, async () => {
  await svc.stop();
  await metrics?.stop();
  await deps.bus.close();
});
