import type pg from "pg";
import {
  auditHash,
  walkAuditChain,
  withTransaction,
  type AuditChained,
  type AuditJson,
  type AuditLink,
  type AuditWalk,
} from "@aps/platform";

/**
 * The audit log (docs/design/identity-and-abuse.md#audit-log): tables `audit_log` and
 * `audit_chain_head` (migration 1773200000000_audit-log.sql). This store only appends, lists and
 * verifies: there is no UPDATE or DELETE of `audit_log` in the code, and a trigger refuses both.
 */

/** One action to append: the entry without its seq and hashes, with the id of what it came from. */
export interface AuditInput extends Omit<AuditChained, "seq"> {
  /** The source event's id (or the append's idempotency key): a second append of it appends nothing. */
  sourceId: string;
}

/** What `append` did. */
export interface Appended {
  /** The entry's seq (the existing one's for a repeated source). */
  seq: string;
  /** False when `sourceId` was already in the log (a redelivery). */
  appended: boolean;
}

/** A page of `list`: entries newest first, `next` the cursor (a seq) of the next page or "" at the end. */
export interface AuditPage {
  items: AuditLink[];
  next: string;
}

/** Filters of `list`. */
export interface AuditQuery {
  /** Every entry (the owner's list); else `visibility = 'public'` only. */
  includePrivate: boolean;
  /** Entries with seq below this; 0n = from the newest. */
  before: bigint;
  /** Page size, 1..100. */
  limit: number;
  /** Only the entries of this target id ("" = any). */
  target: string;
  /** Only the entries of this actor ("" = any). */
  actor: string;
}

/** Most entries one verify query reads at a time. */
const VERIFY_BATCH = 1000;

interface Row {
  seq: string;
  at: Date;
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  before: Record<string, AuditJson>;
  after: Record<string, AuditJson>;
  reason: string;
  visibility: "public" | "private";
  sealed: boolean;
  prev_hash: string;
  hash: string;
}

const COLUMNS =
  "seq, at, actor, action, target_type, target_id, before, after, reason, visibility, sealed, prev_hash, hash";

function toLink(r: Row): AuditLink {
  return {
    seq: r.seq,
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.action,
    targetType: r.target_type,
    targetId: r.target_id,
    before: r.before,
    after: r.after,
    reason: r.reason,
    visibility: r.visibility,
    sealed: r.sealed,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

/** Reads and appends the audit log of one database (the notifications schema). */
export class AuditStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Appends one entry at the end of the chain, in one transaction: the chain head row is taken
   * `FOR UPDATE` first, so concurrent appends (any replica) queue and each links to the one before
   * it; an entry whose `sourceId` is already there appends nothing (a redelivered event). `at` is
   * normalised to milliseconds (`toISOString`), so the hash is computed on what is stored.
   */
  async append(input: AuditInput): Promise<Appended> {
    return withTransaction(this.pool, async (tx) => {
      const head = await tx.query<{ seq: string; hash: string }>(
        "SELECT seq, hash FROM audit_chain_head WHERE one FOR UPDATE",
      );
      const { seq: last, hash: prevHash } = head.rows[0]!;
      const seen = await tx.query<{ seq: string }>("SELECT seq FROM audit_log WHERE source_id = $1", [input.sourceId]);
      if (seen.rows[0]) return { seq: seen.rows[0].seq, appended: false };
      const seq = String(BigInt(last) + 1n);
      const { sourceId, ...fields } = input;
      const entry: AuditChained = { ...fields, seq, at: new Date(input.at).toISOString() };
      const hash = auditHash(prevHash, entry);
      await tx.query(
        `INSERT INTO audit_log (seq, source_id, at, actor, action, target_type, target_id, before, after, reason,
                                visibility, sealed, prev_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          seq,
          sourceId,
          entry.at,
          entry.actor,
          entry.action,
          entry.targetType,
          entry.targetId,
          JSON.stringify(entry.before),
          JSON.stringify(entry.after),
          entry.reason,
          entry.visibility,
          entry.sealed,
          prevHash,
          hash,
        ],
      );
      await tx.query("UPDATE audit_chain_head SET seq = $1, hash = $2 WHERE one", [seq, hash]);
      return { seq, appended: true };
    });
  }

  /**
   * One keyset page, newest first (`seq < before`), through the indexes audit_log_public,
   * audit_log_target and audit_log_actor. `next` is the last item's seq when the page is full.
   */
  async list(q: AuditQuery): Promise<AuditPage> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (!q.includePrivate) where.push("visibility = 'public'");
    if (q.before > 0n) where.push(`seq < $${args.push(String(q.before))}`);
    if (q.target) where.push(`target_id = $${args.push(q.target)}`);
    if (q.actor) where.push(`actor = $${args.push(q.actor)}`);
    const r = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY seq DESC LIMIT $${args.push(q.limit)}`,
      args,
    );
    const items = r.rows.map(toLink);
    return { items, next: items.length === q.limit ? items.at(-1)!.seq : "" };
  }

  /**
   * Walks the whole chain from seq 1 in batches of VERIFY_BATCH (`walkAuditChain`: no gap, each
   * prev_hash the hash before, each hash recomputed), then checks the chain head: a head ahead of
   * the last row means rows were removed from the end (the first missing seq is named), a head
   * hash other than the last row's means the end was rewritten.
   */
  async verify(): Promise<AuditWalk> {
    let from = { seq: 0n, hash: "0".repeat(64) };
    let entries = 0;
    for (;;) {
      const r = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2`, [
        String(from.seq),
        VERIFY_BATCH,
      ]);
      const walk = walkAuditChain(r.rows.map(toLink), from);
      entries += walk.entries;
      if (walk.firstBad) return { entries, firstBad: walk.firstBad };
      from = walk.last;
      if (r.rows.length < VERIFY_BATCH) break;
    }
    const head = (await this.pool.query<{ seq: string; hash: string }>("SELECT seq, hash FROM audit_chain_head"))
      .rows[0];
    if (head && BigInt(head.seq) > from.seq)
      return {
        entries,
        firstBad: {
          seq: String(from.seq + 1n),
          problem: `entry ${from.seq + 1n} is missing (the chain head is at ${head.seq})`,
        },
      };
    if (head && BigInt(head.seq) < from.seq)
      return { entries, firstBad: { seq: String(BigInt(head.seq) + 1n), problem: "an entry past the chain head" } };
    if (head && BigInt(head.seq) === from.seq && head.hash !== from.hash)
      return { entries, firstBad: { seq: String(from.seq), problem: "its hash is not the chain head's" } };
    return { entries };
  }
}
