import { PostgresEngine } from "@aps/knowledge";
import { createLogger, openDatabase } from "@aps/platform";
const log = createLogger("sq", "warn");
const db = await openDatabase({ url: process.argv[2], schema: "knowledge", log, poolSize: 2 });
const engine = new PostgresEngine(db, log);
for (const tags of [["post"], ["post", "review"], ["docs"]]) {
  const times = []; let r;
  for (let k = 0; k < 3; k++) { const t = performance.now(); r = await engine.search("", tags, 10); times.push(Math.round(performance.now() - t)); }
  console.log(JSON.stringify({ tags, times, total: r.total, n: r.hits.length }));
}
await db.close();
