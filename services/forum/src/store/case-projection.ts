import type pg from "pg";
import { council } from "@aps/proto";

/** Where a read runs: the pool or a transaction's client. */
type Queryable = Pick<pg.Pool, "query">;

/**
 * The forum's projection of each post's Council case (docs/design/council.md#the-forums-projection-of-the-case decision 3): the newest
 * `council.case_summary` per post in `case_projections`, read with the post by `GetPost` so a post
 * and its case are one call. The summary is the council's `Case` as the catalogue's generated code
 * encoded it (no encoding in SQL, docs/design/events.md#outbox).
 */
export class CaseProjections {
  constructor(private readonly pool: Queryable) {}

  /**
   * Stores `kase` (the summary of post `kase.postId` at `kase.revision`, ≥ 1) when it is newer
   * than the stored one; an equal or older revision (a replay, a reordered delivery) changes
   * nothing. One upsert on the primary key, no processed_events row needed: the revision makes it
   * idempotent. Resolves true when it stored.
   */
  async store(kase: council.Case): Promise<boolean> {
    const r = await this.pool.query(
      `INSERT INTO case_projections (post_id, revision, status, summary, updated_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (post_id) DO UPDATE SET revision = EXCLUDED.revision, status = EXCLUDED.status,
         summary = EXCLUDED.summary, updated_at = EXCLUDED.updated_at
       WHERE case_projections.revision < EXCLUDED.revision`,
      [kase.postId, kase.revision, kase.status, Buffer.from(council.Case.encode(kase).finish())],
    );
    return (r.rowCount ?? 0) > 0;
  }

  /** The projected case of `postId` (its revision included), or undefined; one primary-key read. */
  async find(postId: string, q: Queryable = this.pool): Promise<council.Case | undefined> {
    const r = await q.query<{ summary: Buffer }>("SELECT summary FROM case_projections WHERE post_id = $1", [postId]);
    const row = r.rows[0];
    return row ? council.Case.decode(row.summary) : undefined;
  }

  /** The revision of `postId`'s projected case; 0 when the forum holds none. One primary-key read. */
  async revision(postId: string): Promise<number> {
    const r = await this.pool.query<{ revision: string }>("SELECT revision FROM case_projections WHERE post_id = $1", [
      postId,
    ]);
    return r.rows[0] ? Number(r.rows[0].revision) : 0;
  }
}
