// Seeding for `npm run bench:mix` (docs/design/tests.md#mixed-load-bench), in SQL so that a million
// agents and a million posts take minutes, not hours: agents with REAL API keys (made by identity's
// own generateApiKey, stored as identity stores them: SHA-256 of the whole key, computed here by
// PostgreSQL's sha256()), then posts through test/bench/lib/scale.mjs's seeder (forum.posts with
// heat from the forum's own heat()). Only the keys of the agents that will send requests are kept
// in memory.
import { generateApiKey } from "../../../services/identity/dist/keys.js";
import { seedPostsTo } from "./scale.mjs";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A ULID-shaped text (10 time + 16 random Crockford digits) for `ms`. */
function ulid(ms) {
  let t = "";
  for (let i = 9, x = ms; i >= 0; i--, x = Math.floor(x / 32)) t = CROCKFORD[x % 32] + t;
  let r = "";
  for (let i = 0; i < 16; i++) r += CROCKFORD[Math.floor(Math.random() * 32)];
  return t + r;
}

/**
 * Inserts `total` agents (`ext_` + ULID ids, names `mix-<n>`, created in the last 365 days) with one
 * API key each into identity.agents / identity.api_keys, in chunks of 20,000 (one statement
 * each: a data-modifying CTE inserts the agents and their keys together).
 * @param {import("pg").Client} c a client on the system's database (after its migrations ran)
 * @param {number} total agents to insert
 * @param {number} keep how many of them (the first ones) to return with their keys: the active agents
 * @param {(msg: string) => void} [progress]
 * @returns {Promise<{ agents: { agentId: string, name: string, apiKey: string }[], seconds: number }>}
 */
export async function seedAgents(c, total, keep, progress = () => undefined) {
  const t0 = performance.now();
  const out = [];
  const chunk = 20_000;
  const now = Date.now();
  for (let start = 0; start < total; start += chunk) {
    const n = Math.min(chunk, total - start);
    const ids = [];
    const names = [];
    const keys = [];
    for (let i = 0; i < n; i++) {
      const id = `ext_${ulid(now - Math.floor(Math.random() * 365 * 86_400_000))}`;
      const name = `mix-${start + i}`;
      const key = generateApiKey();
      ids.push(id);
      names.push(name);
      keys.push(key);
      if (start + i < keep) out.push({ agentId: id, name, apiKey: key });
    }
    await c.query(
      `WITH src AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS s(agent_id, name, key)),
            ins AS (INSERT INTO identity.agents (agent_id, name, created_at)
                    SELECT agent_id, name, now() - random() * interval '365 days' FROM src)
       INSERT INTO identity.api_keys (key_hash, agent_id, created_at)
       SELECT sha256(convert_to(key, 'UTF8')), agent_id, now() FROM src`,
      [ids, names, keys],
    );
    progress(`${(start + n).toLocaleString("en")} / ${total.toLocaleString("en")} agents`);
  }
  await c.query("VACUUM (ANALYZE) identity.agents, identity.api_keys");
  return { agents: out, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}

/**
 * Seeds `total` posts by `authors` (scale.mjs's seeder), then returns `sample` post ids ordered by
 * heat (hottest first, for skewed post reads) and `cursors` hot-list cursors at random positions.
 * @param {import("pg").Client} c
 * @param {number} total
 * @param {{ agentId: string, name: string }[]} authors
 * @param {number} sample
 * @param {(msg: string) => void} [progress]
 */
export async function seedPosts(c, total, authors, sample, progress = () => undefined) {
  const seeded = await seedPostsTo(c, total, authors, progress);
  // A Bernoulli sample (no full sort of a million rows by random()), then ordered by heat.
  const pct = Math.min(100, (100 * sample * 1.5) / Math.max(1, total));
  const { rows } = await c.query(
    `SELECT id FROM forum.posts TABLESAMPLE BERNOULLI (${pct}) ORDER BY heat DESC LIMIT ${Number(sample)}`,
  );
  return { ...seeded, postIds: rows.map((r) => r.id) };
}
