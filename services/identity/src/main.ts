import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: pg, gRPC and http are imported only after the SDK has hooked them.
await startTelemetry("identity");
const { metricsPortFromEnv, onShutdown, openServiceDeps, startMetricsServer } = await import("@aps/platform");
const { loadConfig } = await import("./config.js");
const { ownerVerificationOf, startIdentity } = await import("./service.js");

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("identity", cfg);
if (cfg.WEBHOOK_ALLOW_PRIVATE)
  deps.log.warn(
    "WEBHOOK_ALLOW_PRIVATE is on: owner checks may fetch http and private addresses (tests and local setups only)",
  );
const svc = await startIdentity(deps, {
  listenAddr: cfg.IDENTITY_LISTEN_ADDR,
  forumAddr: cfg.FORUM_GRPC_ADDR,
  joinsPerSourcePerDay: cfg.JOINS_PER_SOURCE_PER_DAY,
  sagacityVotesPageSize: cfg.SAGACITY_VOTES_PAGE_SIZE,
  owners: ownerVerificationOf(cfg),
});
const metrics = await startMetricsServer(metricsPortFromEnv(), deps.log);
onShutdown(deps.log, async () => {
  await svc.stop();
  await metrics?.stop();
  await deps.bus.close();
});
