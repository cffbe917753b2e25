import { startEmbeddedPostgres } from "@aps/all-in-one";
import { createLogger } from "@aps/platform";
import { writeFileSync } from "node:fs";
const s = await startEmbeddedPostgres({ dataDir: "/tmp/scratch/epg", port: 0, log: createLogger("pg", "warn") });
writeFileSync("/tmp/scratch/epg.url", s.url);
console.log(s.url);
process.on("SIGTERM", async () => { await s.stop(); process.exit(0); });
setInterval(() => {}, 1 << 30);
