import pg from "pg";
import { PostgresEngine } from "@aps/knowledge";
import { SIMILAR_MIN_SCORE, similarQuery } from "@aps/knowledge/similar";
import { createLogger, openDatabase } from "@aps/platform";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const orig = pg.Client.prototype.query;
let capture = false;
pg.Client.prototype.query = function (...args) {
  const text = typeof args[0] === "string" ? args[0] : args[0]?.text ?? "";
  if (capture && /^\s*(WITH|SELECT id, score)/.test(text)) {
    return orig.call(this, "EXPLAIN (ANALYZE, BUFFERS) " + text, args[1]).then((r) => { console.log(r.rows.map((x) => x["QUERY PLAN"]).filter((l) => /Execution|Heap Scan|Nested|Limit|Hash|Subquery|SubPlan|Buffers|Join/.test(l)).join("\n")); return { rows: [] }; });
  }
  return orig.apply(this, args);
};
const log = createLogger("x", "warn");
const db = await openDatabase({ url: process.env.URL, schema: "knowledge", log, poolSize: 2 });
const e = new PostgresEngine(db, log);
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
capture = true;
for (let k = 0; k < Number(process.argv[2] ?? 2); k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  await e.search(similarQuery(p.title, p.body), ["post"], 5, { match: "any", minScore: SIMILAR_MIN_SCORE });
}
await db.close();
