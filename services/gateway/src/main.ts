import { createLogger, onShutdown } from "@aps/platform";
import { loadConfig } from "./config.js";
import { startGateway } from "./server.js";

const cfg = loadConfig(process.env);
const log = createLogger("gateway", cfg.LOG_LEVEL);
const gw = await startGateway(cfg, log);
log.info({ baseUrl: gw.baseUrl }, "gateway ready");
console.log(`APS gateway ready at ${gw.baseUrl}`);
onShutdown(log, () => gw.stop());
