import pg from "pg";
import { similarQuery } from "@aps/knowledge/similar";
import { queryTerms, STOPWORDS } from "@aps/knowledge/text";
import { seededRandom, pepsDatasetPath } from "@aps/testkit";
import { loadPeps, postAt } from "./bench/lib/search-corpus.mjs";
const c = new pg.Client("postgres://postgres@127.0.0.1:5432/aps_scratch"); await c.connect();
await c.query("SET search_path = knowledge");
const peps = loadPeps(pepsDatasetPath());
const rnd = seededRandom(19);
for (let k = 0; k < 5; k++) {
  const p = postAt(peps, Math.floor(rnd() * 100000), 18);
  const words = queryTerms(similarQuery(p.title, p.body)).filter((t) => !STOPWORDS.has(t));
  const r = await c.query("SELECT term, df FROM terms WHERE term = ANY($1)", [words]);
  const df = new Map(r.rows.map((x) => [x.term, x.df]));
  const w = words.map((t) => [t, df.get(t) ?? 0]).filter(([, d]) => d > 0 && d <= 25000).sort((a, b) => a[1] - b[1]).slice(0, 10).map(([t, d]) => [t, d, Math.log(1 + 100000 / d)]);
  const total = w.reduce((s, x) => s + x[2], 0);
  const qs = w.map((x) => `'${x[0].replace(/'/g, "''")}'`);
  const sql = `EXPLAIN (ANALYZE, BUFFERS, TIMING) SELECT id, score, count(*) OVER () AS total FROM (SELECT m.id, sum(u.w) / $3 AS score FROM unnest($1::tsquery[], $2::float8[]) u(q, w)
      CROSS JOIN LATERAL (SELECT id FROM documents d WHERE d.tsv @@ u.q AND d.tags @> '{post}') m GROUP BY m.id) x WHERE score >= 0.3 ORDER BY score DESC, id DESC LIMIT 5`;
  const plan = (await c.query(sql, [qs, w.map((x) => x[2]), total])).rows.map((x) => x["QUERY PLAN"]);
  console.log("sum df", w.reduce((s, x) => s + x[1], 0)); console.log(plan.join("\n"));
}
await c.end();
