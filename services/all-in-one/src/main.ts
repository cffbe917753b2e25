import { startTelemetry } from "@aps/platform/telemetry";

// Tracing first: pg, gRPC, http and express are imported only after the SDK has hooked them.
await startTelemetry("aps");
const { createLogger, InProcessBus, onShutdown } = await import("@aps/platform");
const { startAllInOne } = await import("./all-in-one.js");

const log = createLogger("aps");
const started = Date.now();
const aps = await startAllInOne(process.env, log, new InProcessBus(log));
log.info({ baseUrl: aps.baseUrl, startMs: Date.now() - started }, "APS ready");
console.log(`APS ready at ${aps.baseUrl}`);
onShutdown(log, () => aps.stop());
