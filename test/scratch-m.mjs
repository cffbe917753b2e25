import pg from "pg";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { PostgresEngine } from "@aps/knowledge";
import { createLogger, openDatabase } from "@aps/platform";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const log = createLogger("x", "warn");
const db = await openDatabase({ url: "postgres://postgres@127.0.0.1:5432/aps_scratch", schema: "knowledge", log, poolSize: 2 });
const e = new PostgresEngine(db, log); await e.init();
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
const S = [], T = [];
for (let k = 0; k < 60; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  const words = [...new Set(p.body.toLowerCase().match(/[a-z]{4,}/g) ?? [])].filter((w) => w.length >= 6);
  S.push((await e.search(words.slice(0, 3).join(" "), [], 1)).total);
  const w = words[0] ?? "proposal"; const ty = w[0] + w[2] + w[1] + w.slice(3);
  T.push((await e.search(`${ty} ${words[1] ?? ""}`.trim(), [], 1)).total);
}
S.sort((a, b) => a - b); T.sort((a, b) => a - b);
console.log("search M p50", S[30], "p90", S[54], "max", S[59]); console.log("typo M p50", T[30], "p90", T[54], "max", T[59]);
await db.close();
