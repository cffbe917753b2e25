import { createHash } from "node:crypto";
import { ApsError, type Tx } from "@aps/platform";

/** How long a keyed join is remembered (docs/design/edge.md#request-path: Idempotency-Keys are kept 24 h). */
export const JOIN_KEY_TTL_MS = 24 * 3600_000;
/** How long a retried join can recover its identity with a fresh key, ms (docs/design/agents.md#discovery; the same 5 minutes as a lost key rotation, docs/design/edge.md#authentication). */
export const JOIN_RECOVERY_MS = 5 * 60_000;

/** A join's Idempotency-Key, scoped by the client source the gateway resolved (docs/design/agents.md#discovery). */
export interface JoinKey {
  source: string;
  key: string;
  name: string;
  url: string;
}

/** SHA-256 of what a join asks for (name, url): a retry must ask for the same identity. */
function requestHash(k: JoinKey): string {
  return createHash("sha256").update(`${k.name}\n${k.url}`).digest("hex");
}

/**
 * In transaction `tx`, serialises joins with `k` and returns the agent a previous join with the
 * same source and key created within JOIN_RECOVERY_MS, or undefined when there is none (an expired
 * record is dropped). Throws 422 `idempotency_mismatch` when the key was used for another name or
 * url, and 409 `invalid_state` when the recovery window has passed (the key stays bound for 24 h).
 */
export async function previousJoin(tx: Tx, k: JoinKey, now: Date): Promise<string | undefined> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`join\n${k.source}\n${k.key}`]);
  const r = await tx.query<{ request_hash: string; agent_id: string; created_at: Date }>(
    "SELECT request_hash, agent_id, created_at FROM join_idempotency WHERE source = $1 AND key = $2",
    [k.source, k.key],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  const age = now.getTime() - row.created_at.getTime();
  if (age > JOIN_KEY_TTL_MS) {
    await tx.query("DELETE FROM join_idempotency WHERE source = $1 AND key = $2", [k.source, k.key]);
    return undefined;
  }
  if (row.request_hash !== requestHash(k))
    throw new ApsError("idempotency_mismatch", "this Idempotency-Key was used with a different request; use a new key");
  if (age > JOIN_RECOVERY_MS)
    throw new ApsError(
      "invalid_state",
      "a join with this Idempotency-Key was answered more than 5 minutes ago and can no longer be recovered; join with a new key",
    );
  return row.agent_id;
}

/**
 * Records, in the join's transaction `tx`, that `k` created `agentId` (deleted after 24 h by the
 * retention job, RETENTION_IDEMPOTENCY, docs/design/operations.md#retention).
 */
export async function recordJoin(tx: Tx, k: JoinKey, agentId: string, now: Date): Promise<void> {
  await tx.query(
    "INSERT INTO join_idempotency (source, key, request_hash, agent_id, created_at) VALUES ($1, $2, $3, $4, $5)",
    [k.source, k.key, requestHash(k), agentId, now],
  );
}
