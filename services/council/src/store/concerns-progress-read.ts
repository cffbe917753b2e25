import type { council } from "@aps/proto";

/** Where a read runs: a pool or a transaction's client. */
type Queryable = { query: <R extends object>(sql: string, params: unknown[]) => Promise<{ rows: R[] }> };

interface ConcernRow {
  id: string;
  post_id: string;
  raised_by: string;
  reason: string;
  raised_at: Date;
  resolved_by: string | null;
  resolved_at: Date | null;
  resolve_note: string | null;
}

interface ProgressRow {
  post_id: string;
  percent: number;
  note: string;
  by: string;
  at: Date;
}

/** A concern row as the Case message carries it. */
export function concernOf(r: ConcernRow): council.Concern {
  return {
    id: r.id,
    postId: r.post_id,
    raisedBy: r.raised_by,
    reason: r.reason,
    raisedAt: r.raised_at.toISOString(),
    resolvedBy: r.resolved_by ?? "",
    resolvedAt: r.resolved_at?.toISOString() ?? "",
    resolveNote: r.resolve_note ?? "",
  };
}

/**
 * The concerns and progress updates of the cases `postIds`, oldest first, by post id (two index
 * scans: concerns_post, progress_updates_post; docs/design/council.md#duplicates).
 */
export async function loadConcernsAndProgress(
  q: Queryable,
  postIds: string[],
): Promise<{ concerns: Map<string, council.Concern[]>; progress: Map<string, council.ProgressUpdate[]> }> {
  const [c, p] = await Promise.all([
    q.query<ConcernRow>("SELECT * FROM concerns WHERE post_id = ANY($1::text[]) ORDER BY post_id, id", [postIds]),
    q.query<ProgressRow>("SELECT * FROM progress_updates WHERE post_id = ANY($1::text[]) ORDER BY post_id, seq", [
      postIds,
    ]),
  ]);
  const concerns = new Map<string, council.Concern[]>();
  for (const r of c.rows) concerns.set(r.post_id, [...(concerns.get(r.post_id) ?? []), concernOf(r)]);
  const progress = new Map<string, council.ProgressUpdate[]>();
  for (const r of p.rows)
    progress.set(r.post_id, [
      ...(progress.get(r.post_id) ?? []),
      { percent: r.percent, note: r.note, by: r.by, at: r.at.toISOString() },
    ]);
  return { concerns, progress };
}
