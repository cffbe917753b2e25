import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: pg, gRPC and http are imported only after the SDK has hooked them.
await startTelemetry("translation");
const {
  createLogger,
  databaseOptionsOf,
  grpcServerTuningOf,
  internalTrustOf,
  metricsPortFromEnv,
  onShutdown,
  openDatabase,
  retentionOf,
  startMetricsServer,
} = await import("@aps/platform");
const { loadConfig, translationQuotas } = await import("./config.js");
const { engineFromConfig } = await import("./engines/index.js");
const { startTranslation } = await import("./service.js");

const cfg = loadConfig(process.env);
const log = createLogger("translation", cfg.LOG_LEVEL);
const db = await openDatabase({ url: cfg.databaseUrl, schema: "translation", log, ...databaseOptionsOf(cfg) });
const svc = await startTranslation(
  { db, log, trust: internalTrustOf("translation", cfg), grpc: grpcServerTuningOf(cfg) },
  {
    listenAddr: cfg.TRANSLATION_LISTEN_ADDR,
    forumAddr: cfg.FORUM_GRPC_ADDR,
    engine: engineFromConfig(cfg),
    ...translationQuotas(cfg),
    timeoutMs: cfg.TRANSLATION_TIMEOUT_MS,
    retention: retentionOf(cfg),
  },
);
const metrics = await startMetricsServer(metricsPortFromEnv(), log);
onShutdown(log, async () => {
  await svc.stop();
  await metrics?.stop();
});
