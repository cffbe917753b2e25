import { onShutdown, openServiceDeps } from "@aps/platform";
import { loadConfig } from "./config.js";
import { startForum } from "./service.js";

const cfg = loadConfig(process.env);
const deps = await openServiceDeps("forum", cfg);
const svc = await startForum(deps, {
  listenAddr: cfg.FORUM_LISTEN_ADDR,
  limits: { postsPerDay: cfg.POSTS_PER_DAY, commentsPerDay: cfg.COMMENTS_PER_DAY, agendaMinScore: cfg.AGENDA_MIN_SCORE, agendaSize: cfg.AGENDA_SIZE },
});
onShutdown(deps.log, async () => {
  await svc.stop();
  await deps.bus.close();
});
