import pg from "pg";
import { PostgresEngine } from "@aps/knowledge";
import { createLogger, openDatabase } from "@aps/platform";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const orig = pg.Client.prototype.query;
let capture = false;
pg.Client.prototype.query = function (...args) {
  const text = typeof args[0] === "string" ? args[0] : args[0]?.text ?? "";
  if (capture && /^\s*WITH m AS/.test(text)) {
    return orig.call(this, "EXPLAIN (ANALYZE, BUFFERS) " + text, args[1]).then((r) => { const lines = r.rows.map((x) => x["QUERY PLAN"]); const ex = lines.find((l) => /Execution/.test(l)); if (parseFloat(ex.split(":")[1]) > 60) console.log(lines.join("\n")); return { rows: [] }; });
  }
  return orig.apply(this, args);
};
const log = createLogger("x", "warn");
const db = await openDatabase({ url: process.env.URL, schema: "knowledge", log, poolSize: 2 });
const e = new PostgresEngine(db, log);
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
capture = true;
for (let k = 0; k < 60; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  const words = [...new Set(p.body.toLowerCase().match(/[a-z]{4,}/g) ?? [])].filter((w) => w.length >= 6);
  await e.search(words.slice(0, 3).join(" "), [], 10);
}
await db.close();
