import type pg from "pg";
import { withTransaction, type Clock } from "@aps/platform";
import type { identity } from "@aps/proto";

/** How long a stored response is replayed (docs/architecture.md §4: keys are kept 24 h). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A claim older than this without a stored response is taken to be abandoned (crashed request). */
export const IDEMPOTENCY_STALE_MS = 60_000;

interface Row {
  request_hash: string;
  state: "in_progress" | "done";
  status: number | null;
  body: string | null;
  content_type: string | null;
  location: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Idempotency-Key records (Stripe semantics, IETF httpapi idempotency draft), per agent, in the
 * identity schema so every gateway replica shares them. A key is claimed atomically by the
 * first request (`proceed`); a retry with the same request hash gets the stored response
 * (`replay`), or `in_progress` while the first still runs; another request hash gets
 * `mismatch`. Records expire after 24 h; a claim left without a response for 60 s is taken over.
 */
export class IdempotencyStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  /** Claims `key` for `requestHash` or reports its state. */
  async begin(agentId: string, key: string, requestHash: string): Promise<identity.IdempotencyRecord> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const ins = await tx.query(
        `INSERT INTO idempotency_keys (agent_id, key, request_hash, state, created_at, updated_at)
         VALUES ($1, $2, $3, 'in_progress', $4, $4) ON CONFLICT (agent_id, key) DO NOTHING`,
        [agentId, key, requestHash, now],
      );
      if (ins.rowCount === 1) return proceed();
      const r = await tx.query<Row>("SELECT * FROM idempotency_keys WHERE agent_id = $1 AND key = $2 FOR UPDATE", [
        agentId,
        key,
      ]);
      const row = r.rows[0]!;
      const expired = now.getTime() - row.created_at.getTime() > IDEMPOTENCY_TTL_MS;
      const abandoned = row.state === "in_progress" && now.getTime() - row.updated_at.getTime() > IDEMPOTENCY_STALE_MS;
      if (expired || (abandoned && row.request_hash === requestHash)) {
        await tx.query(
          "UPDATE idempotency_keys SET request_hash = $3, state = 'in_progress', status = NULL, body = NULL, content_type = NULL, location = NULL, created_at = $4, updated_at = $4 WHERE agent_id = $1 AND key = $2",
          [agentId, key, requestHash, now],
        );
        return proceed();
      }
      if (row.request_hash !== requestHash) return { ...proceed(), state: "mismatch" };
      if (row.state === "in_progress") return { ...proceed(), state: "in_progress" };
      return {
        state: "replay",
        status: row.status ?? 200,
        body: row.body ?? "",
        contentType: row.content_type ?? "",
        location: row.location ?? "",
      };
    });
  }

  /** Stores the response of a claimed key, or deletes the claim when `release` is set. */
  async finish(req: identity.FinishIdempotencyRequest): Promise<void> {
    if (req.release) {
      await this.pool.query("DELETE FROM idempotency_keys WHERE agent_id = $1 AND key = $2 AND state = 'in_progress'", [
        req.agentId,
        req.key,
      ]);
      return;
    }
    await this.pool.query(
      "UPDATE idempotency_keys SET state = 'done', status = $3, body = $4, content_type = $5, location = $6, updated_at = $7 WHERE agent_id = $1 AND key = $2",
      [req.agentId, req.key, req.status, req.body, req.contentType, req.location, this.clock.now()],
    );
  }
}

function proceed(): identity.IdempotencyRecord {
  return { state: "proceed", status: 0, body: "", contentType: "", location: "" };
}
