/**
 * The source a +1 of an agent younger than MIN_AGENT_AGE_MS is stored under
 * (docs/design/votes-and-heat.md#agenda-score-per-source, "New agents"): `cast_vote` keeps it on
 * the vote but counts no +1 for it toward the agenda score or heat.
 */
export const UNCOUNTED_SOURCE = "uncounted:new-agent";

/**
 * Whether an agent that joined at `joinedAt` is younger than `minAgeMs` at `now`, so that its +1
 * and its flags carry no weight (docs/design/identity-and-abuse.md#new-agents). False when the rule
 * is off (`minAgeMs` 0), when the join instant is unknown (`""`, an older gateway) or unparsable,
 * and for an agent counted as its own source (`agent:<id>`: local agents on a loopback-only gateway,
 * where one developer runs them all; or `""`, the caller's own), so `npm start` demos still move.
 *
 * @param joinedAt the agent's `created_at`, RFC 3339 UTC, as the gateway authenticated it
 * @param source the abuse source the gateway sent with the write
 * @param now the forum's clock
 * @param minAgeMs MIN_AGENT_AGE_MS, ms
 */
export function tooNewToCount(joinedAt: string, source: string, now: Date, minAgeMs: number): boolean {
  if (minAgeMs <= 0 || joinedAt === "" || source === "" || source.startsWith("agent:")) return false;
  const t = Date.parse(joinedAt);
  return Number.isFinite(t) && now.getTime() - t < minAgeMs;
}
