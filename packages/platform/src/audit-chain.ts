import { createHash } from "node:crypto";

/**
 * The hash chain of the audit log (docs/design/identity-and-abuse.md#audit-log), shared by the
 * notifications service that appends and verifies it and the admin CLI (`aps audit verify`) that
 * walks it again from the owner's list: both must compute the same bytes.
 */

/** `prev_hash` of the first entry: 64 zeros. */
export const AUDIT_GENESIS = "0".repeat(64);

/** A JSON value as the audit log stores it in `before`/`after`. */
export type AuditJson = null | boolean | number | string | AuditJson[] | { [k: string]: AuditJson };

/** The fields of an audit entry that its hash covers (everything but the hashes themselves). */
export interface AuditChained {
  /** Position in the chain, 1, 2, 3 …, as a decimal string (PostgreSQL bigint). */
  seq: string;
  /** When the action happened, ISO 8601 UTC with milliseconds (`Date.toISOString()`). */
  at: string;
  /** An agent id, `owner` or `system`. */
  actor: string;
  /** E.g. `agent.suspended`, `ballot.cast`. */
  action: string;
  /** `agent` | `post` | `comment` | `dead_letter`. */
  targetType: string;
  targetId: string;
  /** The changed fields before the action (a small JSON object, `{}` when none). */
  before: Record<string, AuditJson>;
  /** The changed fields after it. */
  after: Record<string, AuditJson>;
  /** The reason given, `""` when none. */
  reason: string;
  visibility: "public" | "private";
  /** A sealed ballot (its position and reason are shown as sealed to public readers). */
  sealed: boolean;
}

/**
 * Canonical JSON of a value: object keys sorted by code unit, no whitespace, arrays in order,
 * `undefined` members left out (as JSON.stringify). Two equal values always give the same string,
 * whatever order PostgreSQL's jsonb hands their keys back in.
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(",")}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
}

/** The canonical JSON an entry's hash covers: `{seq, at, actor, action, target: {type, id}, before, after, reason, visibility, sealed}`. */
export function auditEntryJson(e: AuditChained): string {
  return canonicalJson({
    seq: e.seq,
    at: e.at,
    actor: e.actor,
    action: e.action,
    target: { type: e.targetType, id: e.targetId },
    before: e.before,
    after: e.after,
    reason: e.reason,
    visibility: e.visibility,
    sealed: e.sealed,
  });
}

/** `hash = sha256(prevHash || canonical JSON of the entry)`, lowercase hex (64 characters). */
export function auditHash(prevHash: string, e: AuditChained): string {
  return createHash("sha256").update(prevHash).update(auditEntryJson(e)).digest("hex");
}

/** An entry with its place in the chain, as listed to the owner. */
export interface AuditLink extends AuditChained {
  prevHash: string;
  hash: string;
}

/** The outcome of a walk of the chain: `firstBad` is the first bad sequence number (with what is wrong), absent when every entry holds. */
export interface AuditWalk {
  entries: number;
  firstBad?: { seq: string; problem: string };
}

/**
 * Walks `entries` (oldest first, from seq 1) and checks each one: its seq follows the one before
 * without a gap (a removed row), its `prevHash` is the hash before it (a reordered or removed
 * row), and its `hash` is recomputed from its fields (a changed column). Stops at the first bad
 * entry. `from` continues a walk: the seq and hash of the last entry already checked.
 */
export function walkAuditChain(
  entries: Iterable<AuditLink>,
  from: { seq: bigint; hash: string } = { seq: 0n, hash: AUDIT_GENESIS },
): AuditWalk & { last: { seq: bigint; hash: string } } {
  let { seq, hash } = from;
  let n = 0;
  for (const e of entries) {
    const want = seq + 1n;
    const bad = (problem: string) => ({ entries: n, firstBad: { seq: String(want), problem }, last: { seq, hash } });
    if (BigInt(e.seq) !== want) return bad(`entry ${want} is missing (the next one is ${e.seq})`);
    if (e.prevHash !== hash) return bad(`its prev_hash is not the hash of entry ${seq}`);
    if (auditHash(e.prevHash, e) !== e.hash) return bad("its hash does not match its fields");
    seq = want;
    hash = e.hash;
    n++;
  }
  return { entries: n, last: { seq, hash } };
}
