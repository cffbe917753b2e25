// The vote baseline (docs/performance.md): a raw `INSERT … ON CONFLICT DO UPDATE` of one vote row, looped at
// the same concurrency as the HTTP vote load, on the SAME PostgreSQL server the system uses, into
// a table shaped like forum.votes that is created for the baseline and dropped afterwards.
import pg from "pg";
import { onCleanup } from "./cleanup.mjs";
import { LOAD, round } from "./load.mjs";
import { percentile } from "./stats.mjs";

/**
 * How many more connections the server at `url` accepts now (max_connections minus every backend
 * connected, minus 2 spare), waiting up to `waitMs` for it to reach `want` (the system's idle
 * pool connections close after pg's 10 s idle timeout). Returns min(want, headroom).
 */
async function connectionsAvailable(url, want, waitMs = 12_000) {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => undefined);
  await c.connect();
  try {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const { rows } = await c.query(
        "SELECT current_setting('max_connections')::int - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int - 2 AS free",
      );
      const free = rows[0].free;
      if (free >= want || Date.now() > deadline) return Math.max(1, Math.min(want, free));
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await c.end();
  }
}

/**
 * Runs the baseline for LOAD.warmup + LOAD.duration seconds with LOAD.connections clients (fewer
 * when the server's max_connections leaves less room beside the system's pools: `concurrency` in
 * the result says how many), each upserting a random (post, agent, ±1) from `postIds` × `agentIds`
 * in a loop.
 * @param {string} url a connection URL of the system's PostgreSQL (database where a scratch table may be created)
 * @param {string[]} postIds
 * @param {string[]} agentIds
 * @param {{ start?: () => void, stop?: () => void }} [around] called right before and right after the
 *   measured loop, while its connections are open (CPU samples of their backends, docs/design/tests.md#mixed-load-bench)
 * @returns {Promise<import("./load.mjs").LoadResult & { concurrency: number }>} `reqPerSec` = upserts per second; latencies in ms
 * @throws when the table cannot be created or an upsert fails
 */
export async function rawUpsert(url, postIds, agentIds, around = {}) {
  const table = `bench_upsert_${process.pid}_${Date.now().toString(36)}`;
  const concurrency = await connectionsAvailable(url, LOAD.connections);
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  pool.on("error", () => undefined); // an idle client cut by the server: the loop's own query fails instead
  const closePool = onCleanup("close the upsert pool", () => pool.end());
  const drop = onCleanup(`drop ${table}`, () => pool.query(`DROP TABLE IF EXISTS public.${table}`));
  try {
    await pool.query(
      `CREATE TABLE public.${table} (
         post_id text NOT NULL, agent_id text NOT NULL,
         vote smallint NOT NULL CHECK (vote IN (1, -1)), cast_at timestamptz NOT NULL,
         PRIMARY KEY (post_id, agent_id))`,
    );
    const sql = `INSERT INTO public.${table} (post_id, agent_id, vote, cast_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (post_id, agent_id) DO UPDATE SET vote = EXCLUDED.vote, cast_at = EXCLUDED.cast_at`;
    const loop = async (seconds, lat) => {
      const end = performance.now() + seconds * 1000;
      let n = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          const c = await pool.connect();
          try {
            while (performance.now() < end) {
              const args = [
                postIds[Math.floor(Math.random() * postIds.length)],
                agentIds[Math.floor(Math.random() * agentIds.length)],
                Math.random() < 0.5 ? 1 : -1,
                new Date(),
              ];
              const t = performance.now();
              await c.query(sql, args);
              lat?.push(performance.now() - t);
              n++;
            }
          } finally {
            c.release();
          }
        }),
      );
      return n;
    };
    if (LOAD.warmup > 0) await loop(LOAD.warmup);
    const lat = [];
    around.start?.();
    const t0 = performance.now();
    const n = await loop(LOAD.duration, lat);
    const seconds = (performance.now() - t0) / 1000;
    around.stop?.();
    lat.sort((a, b) => a - b);
    const pct = (p) => round(percentile(lat, p) ?? 0, 2);
    return {
      concurrency,
      reqPerSec: round(n / seconds, 1),
      p50: pct(0.5),
      p99: pct(0.99),
      ok: n,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: round(seconds, 2),
      bytesPerAnswer: 0,
    };
  } finally {
    await drop();
    await closePool();
  }
}
