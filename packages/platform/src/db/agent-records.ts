import type pg from "pg";
import { ApsError } from "../errors.js";
import { withTransaction } from "./database.js";

/**
 * One kind of an agent's own records that `ListAgentRecords` pages through (forum, council,
 * notifications; `GET /v1/me/export`, docs/design/agents.md#an-agents-own-data): the rows of `from` where
 * `where` (SQL, the agent id as `$1`) holds, ordered by `key` (a unique text expression), with
 * only `columns` (never a secret, a client source or another agent's private field).
 */
export interface AgentRecordKind {
  /** A table of the service's schema (unqualified: the pool's search_path). */
  from: string;
  /** SQL condition on the agent id `$1`. */
  where: string;
  /** A unique, text-sortable SQL expression of the row: the keyset cursor. */
  key: string;
  /** The fields each record holds: a column, or `[name, SQL expression]` (a reason from another table). */
  columns: readonly (string | readonly [name: string, sql: string])[];
}

/** Most records per page of `ListAgentRecords`. */
export const AGENT_RECORDS_MAX = 500;

/** One page of `ListAgentRecords`: JSON objects (timestamps RFC 3339 UTC) and the cursor after the last one ("" when none follow). */
export interface AgentRecordsPage {
  records: string[];
  nextCursor: string;
}

/**
 * One keyset page of an agent's records of `kind` (one of `kinds`), after `cursor` ("" = from the
 * start), at most `limit` (1–AGENT_RECORDS_MAX): one indexed-or-filtered read, never the whole set.
 * @throws ApsError `invalid_argument` for an unknown kind or a limit out of range.
 */
export async function listAgentRecords(
  pool: pg.Pool,
  kinds: Readonly<Record<string, AgentRecordKind>>,
  req: { agentId: string; kind: string; cursor: string; limit: number },
): Promise<AgentRecordsPage> {
  const k = Object.hasOwn(kinds, req.kind) ? kinds[req.kind] : undefined;
  if (!k) throw new ApsError("invalid_request", `kind is one of ${Object.keys(kinds).join(", ")}`);
  if (!Number.isInteger(req.limit) || req.limit < 1 || req.limit > AGENT_RECORDS_MAX)
    throw new ApsError("invalid_request", `limit is 1–${AGENT_RECORDS_MAX}`);
  if (!req.agentId || req.agentId.length > 64) throw new ApsError("invalid_request", "agentId is 1–64 characters");
  if (req.cursor.length > 256) throw new ApsError("invalid_request", "cursor is at most 256 characters");
  const cols = k.columns.map((c) => (typeof c === "string" ? `'${c}', ${c}` : `'${c[0]}', ${c[1]}`)).join(", ");
  // timestamps in UTC whatever the server's TimeZone: RFC 3339 with +00:00
  const r = await withTransaction(pool, async (tx) => {
    await tx.query("SET LOCAL TimeZone = 'UTC'");
    return tx.query<{ k: string; j: string }>(
      `SELECT ${k.key} AS k, json_build_object(${cols})::text AS j FROM ${k.from}
        WHERE (${k.where}) AND ${k.key} > $2 ORDER BY ${k.key} LIMIT $3`,
      [req.agentId, req.cursor, req.limit + 1],
    );
  });
  const rows = r.rows.slice(0, req.limit);
  return {
    records: rows.map((x) => x.j),
    nextCursor: r.rows.length > req.limit ? rows[rows.length - 1]!.k : "",
  };
}
