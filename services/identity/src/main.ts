import { onShutdown, openServiceDeps } from "@aps/platform";
import { loadConfig } from "./config.js";
import { startIdentity } from "./service.js";

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("identity", cfg);
const svc = await startIdentity(deps, { listenAddr: cfg.IDENTITY_LISTEN_ADDR, forumAddr: cfg.FORUM_GRPC_ADDR, joinsPerSourcePerDay: cfg.JOINS_PER_SOURCE_PER_DAY });
onShutdown(deps.log, async () => {
  await svc.stop();
  await deps.bus.close();
});
