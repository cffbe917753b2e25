import { PostgresEngine } from "@aps/knowledge";
import { createLogger, openDatabase } from "@aps/platform";
const log = createLogger("sq", "warn");
const db = await openDatabase({ url: process.argv[2], schema: "knowledge", log, poolSize: 2 });
const engine = new PostgresEngine(db, log);
for (const [q, tags] of [["python", ["post", "review"]], ["the", ["docs"]], ["python", ["post", "arch"]]]) {
  const times = []; let r;
  for (let k = 0; k < 3; k++) { const t = performance.now(); r = await engine.search(q, tags, 10); times.push(Math.round(performance.now() - t)); }
  console.log(JSON.stringify({ q, tags, times, total: r.total, n: r.hits.length }));
}
await db.close();
