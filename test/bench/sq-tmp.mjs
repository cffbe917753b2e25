import { PostgresEngine } from "@aps/knowledge";
import { createLogger, openDatabase } from "@aps/platform";
const log = createLogger("sq", "warn");
const db = await openDatabase({ url: process.argv[2], schema: "knowledge", log, poolSize: 2 });
const engine = new PostgresEngine(db, log);
const qs = process.argv.slice(3);
for (const q of qs) {
  const times = [];
  let r;
  for (let k = 0; k < 3; k++) { const t = performance.now(); r = await engine.search(q, [], 10); times.push(performance.now() - t); }
  console.log(JSON.stringify({ q, ms: times.map((x) => Math.round(x)), total: r.total, top: r.hits.slice(0, 5).map((h) => h.id.slice(-6) + ":" + h.score) }));
}
await db.close();
