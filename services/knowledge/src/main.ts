import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: gRPC and http are imported only after the SDK has hooked them.
await startTelemetry("knowledge");
const {
  createLogger,
  databaseOptionsOf,
  grpcServerTuningOf,
  internalTrustOf,
  metricsPortFromEnv,
  onShutdown,
  openDatabase,
  startMetricsServer,
} = await import("@aps/platform");
const { openKnowledgeBus } = await import("./bus.js");
const { loadConfig } = await import("./config.js");
const { engineFromConfig, startKnowledge, wantsDatabase } = await import("./service.js");

const cfg = loadConfig(process.env);
const log = createLogger("knowledge", cfg.LOG_LEVEL);
const bus = await openKnowledgeBus(cfg, log);
// the index in PostgreSQL only when asked for (docs/adr/0142); else Meilisearch or MiniSearch
const db =
  cfg.KNOWLEDGE_DATABASE_URL && wantsDatabase(cfg)
    ? await openDatabase({ url: cfg.KNOWLEDGE_DATABASE_URL, schema: "knowledge", log, ...databaseOptionsOf(cfg) })
    : undefined;
const svc = await startKnowledge(
  { bus, log, trust: internalTrustOf("knowledge", cfg), grpc: grpcServerTuningOf(cfg) },
  {
    listenAddr: cfg.KNOWLEDGE_LISTEN_ADDR,
    forumAddr: cfg.FORUM_GRPC_ADDR,
    engine: engineFromConfig(cfg, db && { db, log }),
    docsDir: cfg.KNOWLEDGE_DOCS_DIR,
  },
);
const metrics = await startMetricsServer(metricsPortFromEnv(), log);
onShutdown(log, async () => {
  await svc.stop();
  await metrics?.stop();
  await bus.close();
  await db?.close();
});
