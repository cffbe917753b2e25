import { createHash } from "node:crypto";
import type pg from "pg";
import { ApsError } from "../errors.js";
import type { Clock } from "../clock.js";
import { withTransaction, type Tx } from "./database.js";

/** How long a keyed write's outcome is kept and replayed, ms (24 h, Stripe's rule; docs/design/edge.md#idempotency-key). */
export const IDEMPOTENCY_OUTCOME_TTL_MS = 24 * 3600_000;

/** The generated `encode`/`decode` of a ts-proto message type (e.g. `forum.Post`). */
export interface MessageCodec<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(input: Uint8Array): T;
}

/**
 * One keyed write: the acting agent, its `Idempotency-Key` (as the client sent it, 1–255 visible
 * ASCII characters), the operation (gRPC method name) and the validated request without the key,
 * whose JSON is hashed to tell a retry from another request under the same key.
 */
export interface IdempotencyScope {
  agentId: string;
  key: string;
  operation: string;
  request: unknown;
}

interface OutcomeRow {
  operation: string;
  request_hash: Buffer;
  response: Buffer | null;
}

/**
 * Idempotency-Key outcomes kept by the service that owns the write (docs/design/edge.md#idempotency-key), in its own
 * schema (table `idempotency_outcomes`, a platform migration). `run` claims the key, performs the
 * write and stores its encoded response in ONE transaction, so:
 * - the write happens at most once per (agent, key) within 24 h, whatever happens to the caller
 *   (a gateway that timed out, crashed or answered 503 after the commit);
 * - a retry gets the first response, decoded from the stored bytes (a concurrent retry waits for
 *   the first transaction on the key's row, then reads its outcome);
 * - a write that fails (any thrown error) rolls the claim back with it: nothing was written, and a
 *   retry runs again;
 * - the same key with another operation or request → `idempotency_mismatch` (422).
 * Without a scope (no key), `run` is a plain transaction.
 */
export class IdempotentWrites {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  /**
   * The stored response of `scope`'s key, or undefined when the key is unused (or expired).
   * Lets a handler answer a retry before checks that the first write has since made false (e.g.
   * "only open proposals can be nominated"). Throws `idempotency_mismatch` for another request.
   */
  async replay<T>(scope: IdempotencyScope | undefined, codec: MessageCodec<T>): Promise<T | undefined> {
    if (!scope?.key) return undefined;
    const r = await this.pool.query<OutcomeRow>(
      "SELECT operation, request_hash, response FROM idempotency_outcomes WHERE agent_id = $1 AND key = $2 AND created_at >= $3",
      [scope.agentId, scope.key, this.horizon()],
    );
    return r.rows[0] ? this.stored(r.rows[0], scope, codec) : undefined;
  }

  /**
   * Runs `write` in a transaction; with a keyed `scope`, claims the key first and stores the
   * response with the write, or returns the stored response of an earlier run of the same
   * request without calling `write`. Rethrows what `write` throws (after rolling back).
   */
  async run<T>(scope: IdempotencyScope | undefined, codec: MessageCodec<T>, write: (tx: Tx) => Promise<T>): Promise<T> {
    if (!scope?.key) return withTransaction(this.pool, write);
    const now = this.clock.now();
    const hash = requestHash(scope);
    return withTransaction(this.pool, async (tx) => {
      // A concurrent run of the same key waits here until the first transaction ends; an expired
      // row is taken over in place.
      const claim = await tx.query(
        `INSERT INTO idempotency_outcomes (agent_id, key, operation, request_hash, created_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (agent_id, key) DO UPDATE
           SET operation = EXCLUDED.operation, request_hash = EXCLUDED.request_hash, response = NULL,
               created_at = EXCLUDED.created_at
           WHERE idempotency_outcomes.created_at < $6`,
        [scope.agentId, scope.key, scope.operation, hash, now, this.horizon(now)],
      );
      if (claim.rowCount === 0) {
        const r = await tx.query<OutcomeRow>(
          "SELECT operation, request_hash, response FROM idempotency_outcomes WHERE agent_id = $1 AND key = $2",
          [scope.agentId, scope.key],
        );
        return this.stored(r.rows[0]!, scope, codec, hash);
      }
      const out = await write(tx);
      await tx.query("UPDATE idempotency_outcomes SET response = $3 WHERE agent_id = $1 AND key = $2", [
        scope.agentId,
        scope.key,
        Buffer.from(codec.encode(out).finish()),
      ]);
      return out;
    });
  }

  private stored<T>(row: OutcomeRow, scope: IdempotencyScope, codec: MessageCodec<T>, hash = requestHash(scope)): T {
    if (row.response === null)
      throw new ApsError(
        "idempotency_in_progress",
        "a request with this Idempotency-Key is still running; retry shortly",
        1,
      );
    if (row.operation !== scope.operation || !row.request_hash.equals(hash))
      throw new ApsError(
        "idempotency_mismatch",
        "this Idempotency-Key was used with a different request; use a new key",
      );
    return codec.decode(row.response);
  }

  /** Outcomes created before this instant have expired. */
  private horizon(now = this.clock.now()): Date {
    return new Date(now.getTime() - IDEMPOTENCY_OUTCOME_TTL_MS);
  }
}

/** SHA-256 of the operation and the JSON of the request (the key itself is not part of it). */
function requestHash(scope: IdempotencyScope): Buffer {
  return createHash("sha256")
    .update(`${scope.operation}\n${JSON.stringify(scope.request)}`)
    .digest();
}

/**
 * The scope of a keyed write, or undefined when `key` is "" (the request carried no key).
 * `request` must not contain the key itself.
 */
export function idempotencyScope(
  agentId: string,
  key: string,
  operation: string,
  request: unknown,
): IdempotencyScope | undefined {
  return key ? { agentId, key, operation, request } : undefined;
}
