import type pg from "pg";
import { withTransaction, type Tx } from "../db/database.js";

/**
 * Runs `effect` exactly once per (consumer, eventId) in effect: it records the event in
 * `processed_events` in the same transaction as the effect, so a redelivered or replayed event,
 * or two consumers racing on it, change nothing the second time (docs/design/events.md#path-of-an-event). Returns false
 * when the event had already been processed.
 */
export async function processOnce(
  pool: pg.Pool,
  consumer: string,
  eventId: string,
  effect: (tx: Tx) => Promise<void>,
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const r = await tx.query(
      "INSERT INTO processed_events (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [consumer, eventId],
    );
    if (r.rowCount === 0) return false;
    await effect(tx);
    return true;
  });
}
