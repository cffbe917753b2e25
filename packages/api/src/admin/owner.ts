import { ApsError, type DeadLetterQueue } from "@aps/platform";
import type { identity } from "@aps/proto";
import { renderedAgent } from "../shared.js";

/** An agent as the owner's access routes answer it (`AdminAgent`): with its suspension, null when not suspended. */
export function adminAgent(a: identity.Agent) {
  return { ...renderedAgent(a), suspendedAt: a.suspendedAt || null, suspendedReason: a.suspendedReason || null };
}

/** The dead-letter queue, or 503 `upstream_unavailable` (Retry-After 30 s) when the gateway has no event bus. */
export function deadLettersOf(q: DeadLetterQueue | undefined): DeadLetterQueue {
  if (!q)
    throw new ApsError(
      "upstream_unavailable",
      "this gateway has no event bus (NATS_URL unset and no in-process bus)",
      30,
    );
  return q;
}

/** Codes of the owner's routes. */
export const OWNER = ["unauthenticated", "not_found"] as const;
