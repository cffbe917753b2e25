import { onShutdown, openServiceDeps } from "@aps/platform";
import { loadConfig } from "./config.js";
import { startCouncil } from "./service.js";

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("council", cfg);
const svc = await startCouncil(deps, {
  listenAddr: cfg.COUNCIL_LISTEN_ADDR,
  identityAddr: cfg.IDENTITY_GRPC_ADDR,
  forumAddr: cfg.FORUM_GRPC_ADDR,
  deadlineMs: cfg.COUNCIL_DEADLINE,
  tickMs: cfg.COUNCIL_TICK_MS,
});
onShutdown(deps.log, async () => {
  await svc.stop();
  await deps.bus.close();
});
