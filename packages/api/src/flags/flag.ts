import type { Request } from "express";
import type { RouteDeps } from "../route.js";
import type { identity, forum } from "@aps/proto";
import type { z } from "zod";
import type { flagBody } from "./schemas.js";
import { requestSource } from "../http/client-source.js";
import { oneOf } from "../route.js";

/** Public JSON of a flag as its flagger sees it (openapi/responses.ts `Flag`, docs/design/identity-and-abuse.md#community-flags). */
export function renderFlag(f: forum.FlagResult) {
  return {
    targetId: f.targetId,
    postId: f.postId,
    reason: oneOf(["spam", "abuse", "off-topic", "other"] as const, f.reason, "flag reason"),
    text: f.text || null,
    flaggedAt: f.flaggedAt,
    counted: f.counted,
    hidden: f.hidden,
  };
}

/**
 * Flags `targetId` (a post or a comment) for `me` (docs/reference/moderation-and-council-depth.md,
 * docs/design/identity-and-abuse.md#community-flags): the caller's Sagacity, read fresh from identity (the authentication cache may be
 * seconds old, docs/design/edge.md#authentication-cache), decides the flag's weight in the forum; the caller's source
 * (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source) makes it count at most once per source, and the forum keeps the
 * daily budget FLAGS_PER_DAY (429 `quota_exceeded` beyond; docs/design/identity-and-abuse.md#community-flags). Drops
 * the post's cached reads (a flag may hide it).
 */
export async function flag(
  targetId: string,
  me: identity.Agent,
  b: z.output<typeof flagBody>,
  req: Request,
  { forum: f, identity: id, reads }: RouteDeps,
) {
  const out = await f.flag({
    targetId,
    flaggerId: me.agentId,
    flaggerSagacity: (await id.getAgent({ agentId: me.agentId })).sagacity,
    reason: b.reason,
    text: b.text ?? "",
    source: requestSource(req, me.agentId),
    // a flagger younger than MIN_AGENT_AGE_MS carries no weight (docs/design/identity-and-abuse.md#new-agents)
    flaggerJoinedAt: me.createdAt,
  });
  reads.invalidatePost(out.postId);
  return renderFlag(out);
}
