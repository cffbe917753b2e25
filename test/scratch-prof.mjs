import pg from "pg";
import { PostgresEngine } from "@aps/knowledge";
import { SIMILAR_MIN_SCORE, similarQuery } from "@aps/knowledge/similar";
import { createLogger, openDatabase } from "@aps/platform";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const stats = new Map();
const orig = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  const text = typeof args[0] === "string" ? args[0] : args[0]?.text ?? "";
  const key = text.replace(/\s+/g, " ").slice(0, 70);
  const t = performance.now();
  const r = orig.apply(this, args);
  if (r && typeof r.then === "function") r.then(() => { const s = stats.get(key) ?? []; s.push(performance.now() - t); stats.set(key, s); }, () => {});
  return r;
};
const log = createLogger("x", "warn");
const db = await openDatabase({ url: process.env.URL ?? "postgres://postgres@127.0.0.1:5432/aps_scratch", schema: "knowledge", log, poolSize: 2 });
const e = new PostgresEngine(db, log); await e.init();
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
const mode = process.argv[2] ?? "similar";
const N = 100000;
const lat = [];
for (let k = 0; k < 60; k++) {
  const p = postAt(peps, Math.floor(rnd() * N), 18);
  const words = [...new Set(p.body.toLowerCase().match(/[a-z]{4,}/g) ?? [])].filter((w) => w.length >= 6);
  const t = performance.now();
  if (mode === "similar") await e.search(similarQuery(p.title, p.body), ["post"], 5, { match: "any", minScore: SIMILAR_MIN_SCORE });
  else if (mode === "search") await e.search(words.slice(0, 3).join(" "), [], 10);
  else { const w = words[0] ?? "proposal"; const ty = w[0] + w[2] + w[1] + w.slice(3); await e.search(`${ty} ${words[1] ?? ""}`.trim(), [], 10); }
  lat.push(performance.now() - t);
}
lat.sort((a, b) => a - b);
console.log(mode, "p50", lat[30].toFixed(1), "p95", lat[57].toFixed(1));
for (const [k, v] of stats) { v.sort((a, b) => a - b); console.log(v.length, "p50", v[Math.floor(v.length / 2)].toFixed(1), "p95", v[Math.floor(v.length * 0.95)].toFixed(1), k); }
await db.close();
