import pg from "pg";
import { similarQuery } from "@aps/knowledge/similar";
import { queryTerms, STOPWORDS } from "@aps/knowledge/text";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const c = new pg.Client("postgres://postgres@127.0.0.1:5432/aps_scratch"); await c.connect();
await c.query("SET search_path = knowledge");
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
const A = [], B = [];
for (let k = 0; k < 40; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  const words = queryTerms(similarQuery(p.title, p.body)).filter((t) => !STOPWORDS.has(t));
  const r = await c.query("SELECT term, df FROM terms WHERE term = ANY($1)", [words]);
  const df = new Map(r.rows.map((x) => [x.term, x.df]));
  const w = words.map((t) => [t, df.get(t) ?? 0]).filter(([, d]) => d > 0 && d <= 25000).sort((a, b) => a[1] - b[1]).slice(0, 10).map(([t, d]) => [t, d, Math.log(1 + 100000 / d)]);
  const total = w.reduce((s, x) => s + x[2], 0);
  const qs = w.map((x) => `'${x[0].replace(/'/g, "''")}'`);
  let t = performance.now();
  const r2 = await c.query(`SELECT id, s FROM (SELECT m.id, sum(u.w) / $3 AS s FROM unnest($1::tsquery[], $2::float8[]) u(q, w)
      CROSS JOIN LATERAL (SELECT id FROM documents d WHERE d.tsv @@ u.q AND d.tags @> '{post}') m GROUP BY m.id) x WHERE s >= 0.3 ORDER BY s DESC, id DESC LIMIT 5`, [qs, w.map((x) => x[2]), total]);
  B.push(performance.now() - t);
  if (k < 3) console.log((await c.query(`EXPLAIN (ANALYZE, BUFFERS) SELECT id, s FROM (SELECT m.id, sum(u.w) / $3 AS s FROM unnest($1::tsquery[], $2::float8[]) u(q, w)
      CROSS JOIN LATERAL (SELECT id FROM documents d WHERE d.tsv @@ u.q AND d.tags @> '{post}') m GROUP BY m.id) x WHERE s >= 0.3 ORDER BY s DESC, id DESC LIMIT 5`, [qs, w.map((x) => x[2]), total])).rows.map((x) => x["QUERY PLAN"]).join("\n"));
}
B.sort((a, b) => a - b);
console.log("agg p50", B[20].toFixed(1), "p95", B[38].toFixed(1));
await c.end();
