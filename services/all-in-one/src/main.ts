import { createLogger, InProcessBus, onShutdown } from "@aps/platform";
import { startAllInOne } from "./all-in-one.js";

const log = createLogger("aps");
const started = Date.now();
const aps = await startAllInOne(process.env, log, new InProcessBus(log));
log.info({ baseUrl: aps.baseUrl, startMs: Date.now() - started }, "APS ready");
console.log(`APS ready at ${aps.baseUrl}`);
onShutdown(log, () => aps.stop());
