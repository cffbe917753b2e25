import { withTransaction, systemClock, type Clock, type Database } from "@aps/platform";

/** How long a stored answer is replayed (docs/design/edge.md#request-path: keys are kept 24 h), ms. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A claim older than this without a stored answer is taken to be abandoned (crashed request), ms. */
export const IDEMPOTENCY_STALE_MS = 60_000;
/** Most records the in-process store (no database: the embedded all-in-one) keeps; the oldest go first. */
export const MEMORY_MAX_RECORDS = 10_000;

/**
 * How an Idempotency-Key stands for a request (Stripe semantics): `proceed` (this request claimed
 * it and runs), `replay` (the stored answer: status, body, content type, Location or ""),
 * `in_progress` (the first request still runs) or `mismatch` (the key was used with another request).
 */
export type IdempotencyRecord =
  | { state: "proceed" | "in_progress" | "mismatch" }
  | { state: "replay"; status: number; body: string; contentType: string; location: string };

/** The answer of a claimed key to store, or `release: true` to drop the claim (the request may run again). */
export interface IdempotencyAnswer {
  status: number;
  body: string;
  contentType: string;
  location: string;
  release: boolean;
}

/**
 * The gateway's HTTP Idempotency-Key records, per agent (docs/design/edge.md#idempotency-key, which moved them here from
 * identity; semantics of docs/design/edge.md#idempotency-key). `begin` claims a key atomically or reports its state;
 * `finish` stores the answer or releases the claim. Records expire after 24 h; a claim left
 * without an answer for 60 s is taken over by a retry of the same request.
 */
export interface IdempotencyStore {
  begin(agentId: string, key: string, requestHash: string): Promise<IdempotencyRecord>;
  finish(agentId: string, key: string, answer: IdempotencyAnswer): Promise<void>;
}

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

/** What a stored row answers to a request with `requestHash` at `now` (shared by both stores). */
function standing(row: Row, requestHash: string, now: Date): IdempotencyRecord | "take_over" {
  const expired = now.getTime() - row.created_at.getTime() > IDEMPOTENCY_TTL_MS;
  const abandoned = row.state === "in_progress" && now.getTime() - row.updated_at.getTime() > IDEMPOTENCY_STALE_MS;
  if (expired || (abandoned && row.request_hash === requestHash)) return "take_over";
  if (row.request_hash !== requestHash) return { state: "mismatch" };
  if (row.state === "in_progress") return { state: "in_progress" };
  return {
    state: "replay",
    status: row.status ?? 200,
    body: row.body ?? "",
    contentType: row.content_type ?? "",
    location: row.location ?? "",
  };
}

/**
 * The records in the gateway's schema (`idempotency_keys`, migration 1769000000193), shared by
 * every gateway replica through PostgreSQL: the claim is an INSERT … ON CONFLICT DO NOTHING on
 * the (agent_id, key) primary key, so two replicas racing on one key see one winner.
 * Pruned by the gateway's retention job after RETENTION_IDEMPOTENCY (docs/design/operations.md#retention).
 */
export class PgIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly pool: Database["pool"],
    private readonly clock: Clock = systemClock,
  ) {}

  async begin(agentId: string, key: string, requestHash: string): Promise<IdempotencyRecord> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const ins = await tx.query(
        `INSERT INTO idempotency_keys (agent_id, key, request_hash, state, created_at, updated_at)
         VALUES ($1, $2, $3, 'in_progress', $4, $4) ON CONFLICT (agent_id, key) DO NOTHING`,
        [agentId, key, requestHash, now],
      );
      if (ins.rowCount === 1) return { state: "proceed" };
      const r = await tx.query<Row>("SELECT * FROM idempotency_keys WHERE agent_id = $1 AND key = $2 FOR UPDATE", [
        agentId,
        key,
      ]);
      const s = standing(r.rows[0]!, requestHash, now);
      if (s !== "take_over") return s;
      await tx.query(
        `UPDATE idempotency_keys SET request_hash = $3, state = 'in_progress', status = NULL, body = NULL,
           content_type = NULL, location = NULL, created_at = $4, updated_at = $4 WHERE agent_id = $1 AND key = $2`,
        [agentId, key, requestHash, now],
      );
      return { state: "proceed" };
    });
  }

  async finish(agentId: string, key: string, a: IdempotencyAnswer): Promise<void> {
    if (a.release) {
      await this.pool.query("DELETE FROM idempotency_keys WHERE agent_id = $1 AND key = $2 AND state = 'in_progress'", [
        agentId,
        key,
      ]);
      return;
    }
    await this.pool.query(
      `UPDATE idempotency_keys SET state = 'done', status = $3, body = $4, content_type = $5, location = $6, updated_at = $7
       WHERE agent_id = $1 AND key = $2`,
      [agentId, key, a.status, a.body, a.contentType, a.location, this.clock.now()],
    );
  }
}

/**
 * The records in this process, for a gateway without a database (the embedded all-in-one runs
 * exactly one gateway, as its rate limits do, docs/design/identity-and-abuse.md#per-minute-request-limits). Bounded: at most `maxRecords`
 * (MEMORY_MAX_RECORDS), the oldest claim dropped first; same rules as PgIdempotencyStore.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly rows = new Map<string, Row>();

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly maxRecords = MEMORY_MAX_RECORDS,
  ) {}

  begin(agentId: string, key: string, requestHash: string): Promise<IdempotencyRecord> {
    const id = `${agentId}\n${key}`;
    const now = this.clock.now();
    const row = this.rows.get(id);
    if (row) {
      const s = standing(row, requestHash, now);
      if (s !== "take_over") return Promise.resolve(s);
      this.rows.delete(id);
    }
    this.rows.set(id, {
      request_hash: requestHash,
      state: "in_progress",
      status: null,
      body: null,
      content_type: null,
      location: null,
      created_at: now,
      updated_at: now,
    });
    // a Map iterates in insertion order: the first key is the oldest claim
    while (this.rows.size > this.maxRecords) this.rows.delete(this.rows.keys().next().value!);
    return Promise.resolve({ state: "proceed" });
  }

  finish(agentId: string, key: string, a: IdempotencyAnswer): Promise<void> {
    const id = `${agentId}\n${key}`;
    const row = this.rows.get(id);
    if (!row) return Promise.resolve();
    if (a.release) {
      if (row.state === "in_progress") this.rows.delete(id);
      return Promise.resolve();
    }
    Object.assign(row, {
      state: "done",
      status: a.status,
      body: a.body,
      content_type: a.contentType,
      location: a.location,
      updated_at: this.clock.now(),
    });
    return Promise.resolve();
  }
}
