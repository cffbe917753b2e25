import pg from "pg";
import { PostgresEngine } from "@aps/knowledge";
import { SIMILAR_MIN_SCORE, similarQuery } from "@aps/knowledge/similar";
import { createLogger, openDatabase } from "@aps/platform";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const orig = pg.Client.prototype.query;
let cur = [];
pg.Client.prototype.query = function (...args) {
  const text = typeof args[0] === "string" ? args[0] : args[0]?.text ?? "";
  const t = performance.now();
  const r = orig.apply(this, args);
  r.then?.(() => cur.push([text.replace(/\s+/g, " ").slice(0, 30), (performance.now() - t).toFixed(1), JSON.stringify(args[1]?.[1] ?? "").slice(0, 80)]));
  return r;
};
const log = createLogger("x", "warn");
const db = await openDatabase({ url: process.env.URL, schema: "knowledge", log, poolSize: 2 });
const e = new PostgresEngine(db, log);
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
const all = [];
for (let k = 0; k < 200; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  cur = [];
  const t = performance.now();
  await e.search(similarQuery(p.title, p.body), ["post"], 5, { match: "any", minScore: SIMILAR_MIN_SCORE });
  all.push({ ms: performance.now() - t, q: cur });
}
all.sort((a, b) => b.ms - a.ms);
for (const x of all.slice(0, 8)) console.log(x.ms.toFixed(1), JSON.stringify(x.q));
await db.close();
