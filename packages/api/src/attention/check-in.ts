import type { CouncilClient } from "@aps/platform";
import type { identity } from "@aps/proto";
import { nextCheck, type NextCheck } from "../http/next-check.js";

/** Whether the agent holds a Council seat (only councillors ballot). */
export const isCouncillor = (a: identity.Agent) => a.seats.includes("councillor");

/**
 * The caller's next check-in by the rule of docs/reference/heartbeat.md (http/next-check.ts):
 * for a councillor, sooner near the deadline of its nearest pending ballot (one indexed read of
 * one row); when the Council cannot answer, the default period (a hint must not fail the inbox).
 * Used by `GET /me/attention` and the inbox's `X-Poll-Interval` (docs/design/agents.md#attention).
 */
export function checkInFor(c: CouncilClient): (agent: identity.Agent) => Promise<NextCheck> {
  return async (agent) => {
    if (!isCouncillor(agent)) return nextCheck(new Date());
    const nearest = await c
      .listPendingBallots({ councillorId: agent.agentId, limit: 1 })
      .then((p) => p.items[0]?.deadline)
      .catch(() => undefined);
    return nextCheck(new Date(), nearest ? new Date(nearest) : undefined);
  };
}
