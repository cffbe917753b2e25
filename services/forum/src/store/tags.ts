import type pg from "pg";
import { decodeTupleCursor, encodeTupleCursor } from "@aps/platform";
import type { forum } from "@aps/proto";

/** A count as the cursor carries it: a non-negative integer in decimal. */
const COUNT_TEXT = (x: string): boolean => /^\d{1,10}$/.test(x);

/**
 * One keyset page of the tags in use (GET /v1/tags, docs/reference/editing.md "Tags and filters"): the
 * `tag_counts` rows with at least one visible post, most used first, then by tag, read through
 * the partial index `tag_counts_popular` (never a scan of posts; the trigger of migration
 * tag-counts keeps the counts). `cursor` is "" or a `nextCursor` of this list; a malformed one
 * throws `invalid_request`. `limit` is 1–100.
 */
export async function listTagCounts(pool: pg.Pool, limit: number, cursor: string): Promise<forum.ListTagsResponse> {
  const after = cursor ? decodeTupleCursor(cursor, 2, [COUNT_TEXT]) : undefined;
  const r = await pool.query<{ tag: string; posts: number }>(
    `SELECT tag, posts FROM tag_counts WHERE posts > 0
     ${after ? "AND (posts < $2 OR (posts = $2 AND tag > $3))" : ""}
     ORDER BY posts DESC, tag LIMIT $1`,
    after ? [limit + 1, Number(after[0]), after[1]] : [limit + 1],
  );
  const more = r.rows.length > limit;
  const items = (more ? r.rows.slice(0, limit) : r.rows).map((row) => ({ tag: row.tag, posts: row.posts }));
  const last = items.at(-1);
  return { items, nextCursor: more && last ? encodeTupleCursor([String(last.posts), last.tag]) : "" };
}
