import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: http, express and gRPC are imported only after the SDK has hooked them.
await startTelemetry("gateway");
const { createLogger, onShutdown } = await import("@aps/platform");
const { loadConfig } = await import("./config.js");
const { startGateway } = await import("./server.js");

const cfg = loadConfig(process.env);
const log = createLogger("gateway", cfg.LOG_LEVEL);
const gw = await startGateway(cfg, log);
log.info({ baseUrl: gw.baseUrl }, "gateway ready");
console.log(`APS gateway ready at ${gw.baseUrl}`);
onShutdown(log, () => gw.stop());
