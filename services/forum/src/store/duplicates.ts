import { movesForward, type Tx } from "@aps/platform";

/**
 * Projects `council.post_duplicated` (docs/design/council.md#duplicates): post `postId` becomes `duplicate` of `of`
 * (unless its status is already past that, e.g. a replay) and the original counts one more
 * duplicate, both in `tx` (the consumer's processed_events transaction: exactly once). Returns true
 * when it changed.
 */
export async function projectDuplicate(tx: Tx, postId: string, of: string, at: Date): Promise<boolean> {
  const r = await tx.query<{ status: string }>("SELECT status FROM posts WHERE id = $1 FOR UPDATE", [postId]);
  const cur = r.rows[0]?.status;
  if (cur === undefined || !movesForward(cur, "duplicate")) return false;
  await tx.query(
    "UPDATE posts SET status = 'duplicate', duplicate_of = $2, updated_at = greatest(updated_at, $3) WHERE id = $1",
    [postId, of, at],
  );
  await tx.query("UPDATE posts SET duplicate_count = duplicate_count + 1 WHERE id = $1", [of]);
  return true;
}
