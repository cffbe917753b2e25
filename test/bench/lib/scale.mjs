// Scale step (docs/performance.md): posts seeded directly in SQL into the forum schema's posts
// table (columns from services/forum/src/store/migrations/*.sql), with heat computed by the
// forum's own `heat()` from realistic creation times (the last 365 days) and skewed vote counts,
// plus the EXPLAIN of the hot-list queries and random keyset cursors to load deep pages with.
import pg from "pg";
import { onCleanup } from "./cleanup.mjs";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** SQL text of the `len`-character Crockford base32 of the bigint SQL expression `expr` (ULID digits). */
function b32(expr, len) {
  return Array.from(
    { length: len },
    (_, i) => `substr('${CROCKFORD}', (((${expr}) >> ${5 * (len - 1 - i)}) & 31)::int + 1, 1)`,
  ).join(" || ");
}

/** The posts columns of the hot list, as the forum repository selects them. */
const COLUMNS =
  "id, title, body, is_arch_design, status, author_id, author_name, votes_for, votes_against, comment_count, heat, created_at, updated_at";

/**
 * Opens a client on `url` for the scale step (registered for cleanup); `close()` ends it.
 * @param {string} url
 */
export async function openSql(url) {
  // search_path on the forum's schema, as the forum's own connections have it: its triggers name
  // their tables unqualified (forum_count_post_tags writes tag_counts)
  const c = new pg.Client({ connectionString: url, options: "-c search_path=forum" });
  c.on("error", () => undefined); // a cut connection makes the next query fail instead
  await c.connect();
  const close = onCleanup("close the scale SQL client", () => c.end());
  return { client: c, close };
}

/**
 * Inserts posts into `forum.posts` until it holds `total` rows, in chunks of 100,000 (one
 * statement each), then VACUUM ANALYZE. Ids are valid post ids (`p_` + a ULID of the creation
 * time); authors cycle through `authors`. Returns `{ inserted, total, seconds }`.
 * @param {pg.Client} c
 * @param {number} total target row count
 * @param {{ agentId: string, name: string }[]} authors
 * @param {(msg: string) => void} [progress]
 */
export async function seedPostsTo(c, total, authors, progress = () => undefined) {
  const t0 = performance.now();
  const { rows } = await c.query("SELECT count(*)::bigint AS n FROM forum.posts");
  const have = Number(rows[0].n);
  // Sequence numbers for the id's tail: after every number used before in this database.
  const { rows: mx } = await c.query(
    "SELECT count(*)::bigint AS n FROM forum.posts WHERE title LIKE 'Seeded proposal %'",
  );
  let next = Number(mx[0].n) + 1;
  const ids = authors.map((a) => a.agentId);
  const names = authors.map((a) => a.name);
  const sql = `
    INSERT INTO forum.posts (${COLUMNS})
    SELECT 'p_' || ${b32("ms", 10)} || ${b32("r", 8)} || ${b32("g", 8)},
           'Seeded proposal ' || g,
           'Seeded body ' || g || '. ' || repeat('The gateway answers from the forum read model and keeps the hot list on an index. ', 5),
           g % 3 <> 0,
           CASE WHEN g % 3 <> 0 THEN 'open' ELSE 'discussion' END,
           ($3::text[])[1 + g % cardinality($3::text[])],
           ($4::text[])[1 + g % cardinality($4::text[])],
           vf, va, (g % 7)::int,
           forum.heat(vf - va, created), created, created
    FROM (SELECT g, created,
                 (extract(epoch FROM created) * 1000)::bigint AS ms,
                 (random() * 1099511627775)::bigint AS r,
                 floor(power(random(), 6) * 400)::int AS vf,
                 floor(power(random(), 6) * 100)::int AS va
          FROM (SELECT g, now() - random() * interval '365 days' AS created
                FROM generate_series($1::bigint, $2::bigint) AS g) t) s`;
  let left = total - have;
  while (left > 0) {
    const n = Math.min(left, 100_000);
    await c.query(sql, [next, next + n - 1, ids, names]);
    next += n;
    left -= n;
    progress(`${(total - left).toLocaleString("en")} / ${total.toLocaleString("en")} posts`);
  }
  await c.query("VACUUM (ANALYZE) forum.posts");
  return { inserted: Math.max(0, total - have), total, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the hot list's first page and of a page after a cursor in the
 * middle, as the forum repository runs them (`ORDER BY heat DESC, id DESC LIMIT 26`).
 * Returns `{ firstPage, deepPage }`, each `{ plan: string, usesHotIndex: boolean }`.
 * @param {pg.Client} c
 */
export async function explainHot(c) {
  const { rows } = await c.query(
    "SELECT heat, id FROM forum.posts ORDER BY heat DESC, id DESC OFFSET (SELECT count(*) / 2 FROM forum.posts) LIMIT 1",
  );
  const mid = rows[0];
  const plan = async (where) => {
    const r = await c.query(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT ${COLUMNS} FROM forum.posts ${where} ORDER BY heat DESC, id DESC LIMIT 26`,
    );
    const text = r.rows.map((x) => x["QUERY PLAN"]).join("\n");
    return { plan: text, usesHotIndex: /Index Scan using posts_hot on posts/.test(text) };
  };
  return {
    firstPage: await plan(""),
    deepPage: await plan(`WHERE (heat, id) < (${Number(mid.heat)}::float8, '${mid.id.replace(/[^A-Za-z0-9_]/g, "")}')`),
  };
}

/**
 * `n` hot-list cursors at random positions of `forum.posts`, encoded as the forum encodes them
 * (services/forum/src/store/cursor.ts: base64url of `["h", heat, id]`).
 * @param {pg.Client} c
 * @param {number} n
 */
export async function randomHotCursors(c, n) {
  const { rows } = await c.query("SELECT heat, id FROM forum.posts ORDER BY random() LIMIT $1", [n]);
  return rows.map((r) => Buffer.from(JSON.stringify(["h", Number(r.heat), r.id])).toString("base64url"));
}

/**
 * Gateway cursors for forum hot-list cursors `inners` (`randomHotCursors`): the gateway binds a
 * cursor to its list (services/gateway/src/http/cursor.ts: base64url of `[mark, list, scope,
 * inner]`) and answers 400 `invalid_cursor` to a bare forum cursor; the wrapping is taken from a
 * real `nextCursor` of the hot list's first page at `origin`. Returns [] when there is no second page.
 * @param {string} origin `http://127.0.0.1:<port>`
 * @param {string[]} inners
 */
export async function gatewayHotCursors(origin, inners) {
  const res = await fetch(`${origin}/v1/posts?sort=hot&limit=25`);
  const { nextCursor } = await res.json();
  if (!nextCursor) return [];
  const [mark, list, scope] = JSON.parse(Buffer.from(nextCursor, "base64url").toString("utf8"));
  return inners.map((inner) => Buffer.from(JSON.stringify([mark, list, scope, inner])).toString("base64url"));
}
