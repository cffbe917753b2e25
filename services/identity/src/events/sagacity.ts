import {
  consumeEvents,
  processOnce,
  withTransaction,
  type EventBus,
  type EventOutbox,
  type ForumClient,
  type Subscription,
  type Tx,
} from "@aps/platform";
import type pg from "pg";

/** Points of the seed's Sagacity rules ("Limits"). */
export const ADOPTION_POINTS = 10;
export const MATCHING_VOTE_POINTS = 1;
/**
 * Points of a public vote against the Council's outcome (docs/reference/sagacity.md "How it is
 * earned"): as much as a matching vote earns, so splitting a crowd of agents +1/−1 on a case earns
 * nothing, while one vote on the side the Council takes earns 1.
 */
export const MISSED_VOTE_POINTS = -1;

/** One award to write: unique per (reason, postId, agentId) in the ledger. */
interface Award {
  agentId: string;
  reason: "adoption" | "vote";
  points: number;
}

/**
 * Writes `awards` for `postId` into the ledger and adds the points of the rows actually
 * inserted to `agents.sagacity`, in the caller's transaction. The ledger's primary key
 * (reason, post_id, agent_id) makes a second attempt a no-op. With `outbox`, each row inserted is
 * also announced as `identity.sagacity_awarded` (the agents' feed and inbox, docs/reference/events.md).
 */
export async function awardInTx(
  tx: Tx,
  postId: string,
  eventId: string,
  awards: Award[],
  outbox?: EventOutbox,
): Promise<number> {
  if (awards.length === 0) return 0;
  const r = await tx.query<{ agent_id: string; points: number; reason: string }>(
    `INSERT INTO sagacity_awards (agent_id, reason, post_id, points, event_id)
     SELECT a.agent_id, a.reason, $1, a.points, $2
     FROM unnest($3::text[], $4::text[], $5::int[]) AS a(agent_id, reason, points)
     WHERE EXISTS (SELECT 1 FROM agents WHERE agents.agent_id = a.agent_id)
     ON CONFLICT DO NOTHING RETURNING agent_id, points, reason`,
    [postId, eventId, awards.map((a) => a.agentId), awards.map((a) => a.reason), awards.map((a) => a.points)],
  );
  for (const row of r.rows) {
    await tx.query("UPDATE agents SET sagacity = sagacity + $2 WHERE agent_id = $1", [row.agent_id, row.points]);
    await outbox?.publish(tx, "identity.sagacity_awarded", {
      agentId: row.agent_id,
      postId,
      reason: row.reason,
      points: row.points,
    });
  }
  return r.rows.length;
}

/** True when `consumer` has already processed `eventId` (its processed_events row exists). */
async function processed(pool: pg.Pool, consumer: string, eventId: string): Promise<boolean> {
  const r = await pool.query("SELECT 1 FROM processed_events WHERE consumer = $1 AND event_id = $2", [
    consumer,
    eventId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Sagacity from `council.case_closed` (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/reference/sagacity.md): the author
 * +10 when adopted; every public vote as it stood when the outcome was announced (`decidedAt`: the
 * start of the last call that decided the case, else the close) +1 to its voter when its sign
 * matches the outcome (+1 ↔ adopted, −1 ↔ rejected), −1 when it is the opposite; nothing for a case withdrawn by its author (docs/design/council.md#withdrawal), nor for one that lapsed at
 * its deadline with no Council ballot (not a Council outcome: docs/design/council.md#lapse). The
 * votes as they stood at `decidedAt` come from the forum's vote history, a page of `votesPageSize`
 * identities at a time (0: the forum's default, 1000; docs/design/votes-and-heat.md#vote-history-and-votesat-paging). Exactly once in effect: the
 * ledger's unique key per award, and processed_events per event written with the last award — a
 * redelivery, a replay or two consumers at once give the same totals.
 */
export function consumeCaseClosed(
  bus: EventBus,
  pool: pg.Pool,
  forum: ForumClient,
  outbox?: EventOutbox,
  votesPageSize = 0,
): Promise<Subscription> {
  return consumeEvents(bus, {
    durable: "identity-sagacity",
    handlers: {
      "council.case_closed": async (m) => {
        // Only the Council's outcomes pay: a withdrawn case (docs/design/council.md#withdrawal) or one that lapsed with
        // no ballot (docs/design/council.md#lapse) was never decided, so nobody earns anything.
        if (m.outcome !== "adopted" && m.outcome !== "rejected") return;
        if (await processed(pool, "identity-sagacity", m.eventId)) return;
        const sign = m.outcome === "adopted" ? 1 : -1;
        // The voters a page at a time (docs/design/votes-and-heat.md#vote-history-and-votesat-paging), each page's awards in a transaction of its
        // own: the ledger's key makes a page written twice (a redelivery midway) a no-op, and
        // neither a message nor a transaction grows with the electorate.
        let pageToken = "";
        do {
          // an event from before decidedAt existed has only closedAt (then the same instant)
          const page = await forum.votesAt({
            postId: m.postId,
            at: m.decidedAt || m.closedAt,
            pageToken,
            pageSize: votesPageSize,
          });
          const awards: Award[] = page.votes
            .filter((v) => v.vote === sign || v.vote === -sign)
            .map((v) => ({
              agentId: v.agentId,
              reason: "vote",
              points: v.vote === sign ? MATCHING_VOTE_POINTS : MISSED_VOTE_POINTS,
            }));
          if (awards.length > 0)
            await withTransaction(pool, (tx) => awardInTx(tx, m.postId, m.eventId, awards, outbox));
          pageToken = page.nextPageToken;
        } while (pageToken !== "");
        const last: Award[] =
          m.outcome === "adopted" ? [{ agentId: m.authorId, reason: "adoption", points: ADOPTION_POINTS }] : [];
        await processOnce(pool, "identity-sagacity", m.eventId, (tx) =>
          awardInTx(tx, m.postId, m.eventId, last, outbox).then(() => undefined),
        );
      },
    },
  });
}
