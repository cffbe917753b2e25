import { PostgresEngine } from "@aps/knowledge";
import { SIMILAR_MIN_SCORE, similarQuery } from "@aps/knowledge/similar";
import { createLogger, openDatabase } from "@aps/platform";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt, benchPostIndex } from "./bench/lib/search-corpus.mjs";
const log = createLogger("x", "warn");
const db = await openDatabase({ url: process.env.URL ?? "postgres://postgres@127.0.0.1:5432/aps_scratch", schema: "knowledge", log, poolSize: 2 });
const e = new PostgresEngine(db, log);
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
const src = (i) => Math.floor(seededRandom((18 ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0)() * peps.length);
let top1 = 0, allSame = 0;
let found = 0, sameTitle = 0; const lat = [];
for (let k = 0; k < 200; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  const t = performance.now();
  const r = await e.search(similarQuery(p.title, p.body), ["post"], 5, { match: "any", minScore: SIMILAR_MIN_SCORE });
  lat.push(performance.now() - t);
  if (r.hits.some((h) => h.id === p.id)) found++;
  const me = src(benchPostIndex(p.id));
  if (r.hits[0] && src(benchPostIndex(r.hits[0].id)) === me) top1++;
  if (r.hits.length > 0 && r.hits.every((h) => src(benchPostIndex(h.id)) === me)) allSame++;
  const base = (s) => s.toLowerCase().split(/\s+/).slice(0, 3).join(" ");
  if (r.hits[0] && r.hits.filter((h) => h.id !== p.id).length > 0) sameTitle++;
}
lat.sort((a, b) => a - b);
console.log(process.argv[2], "self in top5", found / 2, "%", "top1 same PEP", top1 / 2, "%", "all 5 same PEP", allSame / 2, "%", "p50", lat[100].toFixed(1), "p95", lat[190].toFixed(1));
await db.close();
