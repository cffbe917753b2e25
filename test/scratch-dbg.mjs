import pg from "pg";
import { similarQuery } from "@aps/knowledge/similar";
import { queryTerms, STOPWORDS } from "@aps/knowledge/text";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const c = new pg.Client("postgres://postgres@127.0.0.1:5432/aps_scratch"); await c.connect();
await c.query("SET search_path = knowledge");
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
for (let k = 0; k < 6; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  const words = queryTerms(similarQuery(p.title, p.body)).filter((t) => !STOPWORDS.has(t));
  const r = await c.query("SELECT term, df FROM terms WHERE term = ANY($1)", [words]);
  const df = new Map(r.rows.map((x) => [x.term, x.df]));
  const rare = words.map((w) => [w, df.get(w) ?? 0]).filter(([, d]) => d <= 25000).sort((a, b) => a[1] - b[1]).slice(0, 10);
  const w = rare.map(([t, d]) => [t, d, d ? Math.log(1 + 100000 / d) : 0]).sort((a, b) => b[2] - a[2]);
  const total = w.reduce((s, x) => s + x[2], 0); let rest = total, ess = 0; while (ess < w.length && rest >= 0.3 * total) rest -= w[ess++][2];
  const q = w.slice(0, ess).map((x) => `'${x[0].replace(/'/g, "''")}'`).join(" | ");
  const t = performance.now();
  const n = (await c.query("SELECT count(*) FROM documents WHERE tsv @@ $1::tsquery", [q])).rows[0].count;
  console.log(p.title, "|", w.map((x) => `${x[0]}:${x[1]}`).join(" "), "| essential", ess, "candidates", n, (performance.now() - t).toFixed(0), "ms");
}
await c.end();
