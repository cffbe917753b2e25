import pg from "pg";
import { postgresAvailable, postgresTestIndex, type PostgresTestIndex } from "./postgres.fixture.js";
import { DROP_TERMS_SQL, LOOKUP_SQL } from "./postgres-engine.js";

/**
 * The vocabulary's exact lookups take the btree, never the trigram index
 * (docs/design/search-and-translation.md#the-postgresql-engine), on the real PostgreSQL: 30,000
 * terms, analysed, then each statement's plan (EXPLAIN, the engine's own SQL and parameters). With
 * `term = ANY($1)` the planner chose `terms_trgm` in a benchmark's index of 22,000 terms, and five
 * words took ≈ 40 ms; which index it picks there depends on statistics, so the last test takes the
 * btree away: a statement the trigram index cannot answer never reads it, whatever the estimates.
 */
const pgUp = await postgresAvailable();
const d = pgUp ? describe : describe.skip;

/** Every index a plan (EXPLAIN FORMAT JSON) reads, by name. */
function indexesOf(plan: unknown): string[] {
  const out: string[] = [];
  const walk = (n: Record<string, unknown>) => {
    if (typeof n["Index Name"] === "string") out.push(n["Index Name"]);
    for (const c of (n["Plans"] as Record<string, unknown>[] | undefined) ?? []) walk(c);
  };
  walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return out;
}

d(pgUp ? "vocabulary lookups (real PostgreSQL)" : "vocabulary lookups (SKIPPED: no PostgreSQL)", () => {
  let index: PostgresTestIndex;
  let c: pg.PoolClient;
  beforeAll(async () => {
    index = await postgresTestIndex();
    await index.engine.init();
    c = await index.db.pool.connect();
    // English-like words: shared trigrams give the trigram index long posting lists, as a real vocabulary does
    await c.query(
      `INSERT INTO terms (term, df)
       SELECT w || s, 1 + (i % 50)
         FROM generate_series(1, 30000) AS i,
              LATERAL (SELECT (ARRAY['python','module','syntax','proposal','import','package','thread','string'])[1 + i % 8] AS w,
                              CASE WHEN i <= 8 THEN '' ELSE 'ing' || (i / 8) END AS s) x
       ON CONFLICT DO NOTHING`,
    );
    await c.query("ANALYZE terms");
  });
  afterAll(async () => {
    c?.release();
    await index?.drop();
  });

  it("LOOKUP_SQL reads terms through terms_pkey alone, and finds each word's frequency", async () => {
    const words = ["python", "module", "syntax", "proposal", "nothingness", "python"];
    const plan = (await c.query(`EXPLAIN (FORMAT JSON) ${LOOKUP_SQL}`, [words])).rows[0]["QUERY PLAN"];
    const used = indexesOf(plan);
    expect(used).toContain("terms_pkey");
    expect(used).not.toContain("terms_trgm");
    const rows = (await c.query<{ term: string | null; df: number }>(LOOKUP_SQL, [words])).rows;
    const found = Object.fromEntries(rows.filter((r) => r.term !== null).map((r) => [r.term, r.df]));
    const expected = Object.fromEntries(
      (
        await c.query<{ term: string; df: number }>("SELECT term, df FROM terms WHERE term = ANY($1)", [words])
      ).rows.map((r) => [r.term, r.df]),
    );
    expect(Object.keys(expected)).toHaveLength(4);
    expect(found).toEqual(expected);
    expect(rows.filter((r) => r.term === null)).toHaveLength(1);
  });

  it("DROP_TERMS_SQL deletes only the named terms no document holds, through terms_pkey", async () => {
    await c.query("UPDATE terms SET df = 0 WHERE term IN ('thread', 'string')");
    const plan = (await c.query(`EXPLAIN (FORMAT JSON) ${DROP_TERMS_SQL}`, [["thread", "import"]])).rows[0][
      "QUERY PLAN"
    ];
    expect(indexesOf(plan)).not.toContain("terms_trgm");
    const r = await c.query(DROP_TERMS_SQL, [["thread", "import"]]);
    expect(r.rowCount).toBe(1);
    const left = (await c.query<{ term: string }>("SELECT term FROM terms WHERE term IN ('thread','string','import')"))
      .rows;
    expect(left.map((x) => x.term).sort()).toEqual(["import", "string"]);
  });

  it("neither statement can read the trigram index, whatever the statistics: without the btree they scan the table", async () => {
    await c.query("ALTER TABLE terms DROP CONSTRAINT terms_pkey");
    await c.query("SET enable_seqscan = off");
    try {
      for (const [sql, words] of [
        [LOOKUP_SQL, ["python", "module"]],
        [DROP_TERMS_SQL, ["python"]],
      ] as const) {
        const plan = (await c.query(`EXPLAIN (FORMAT JSON) ${sql}`, [words])).rows[0]["QUERY PLAN"];
        expect(indexesOf(plan)).not.toContain("terms_trgm");
      }
    } finally {
      await c.query("RESET enable_seqscan");
    }
  });
});
