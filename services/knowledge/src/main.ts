import { createLogger, onShutdown } from "@aps/platform";
import { openKnowledgeBus } from "./bus.js";
import { loadConfig } from "./config.js";
import { engineFromConfig, startKnowledge } from "./service.js";

const cfg = loadConfig(process.env);
const log = createLogger("knowledge", cfg.LOG_LEVEL);
const bus = await openKnowledgeBus(cfg, log);
const svc = await startKnowledge({ bus, log }, {
  listenAddr: cfg.KNOWLEDGE_LISTEN_ADDR,
  forumAddr: cfg.FORUM_GRPC_ADDR,
  engine: engineFromConfig(cfg),
  docsDir: cfg.KNOWLEDGE_DOCS_DIR,
});
onShutdown(log, async () => {
  await svc.stop();
  await bus.close();
});
