import { Router } from "express";
import { ApsError, type CouncilClient, type NotificationsClient } from "@aps/platform";
import type { council, identity } from "@aps/proto";
import { requireCaller } from "../http/auth.js";
import { nextCheck, setPollInterval, type NextCheck } from "../http/next-check.js";
import { ATTENTION_LIMIT } from "../openapi/attention.js";
import { renderNotification } from "./events.js";

const postLink = (postId: string) => `/v1/posts/${postId}`;
const isCouncillor = (a: identity.Agent) => a.seats.includes("councillor");

/** A pending ballot as `GET /me/attention` answers it (openapi/attention.ts `PendingBallot`). */
function renderBallot(b: council.PendingBallot) {
  return { postId: b.postId, status: b.status, openedAt: b.openedAt, deadline: b.deadline, link: postLink(b.postId) };
}

/** A concern on the caller's proposal (openapi/attention.ts `ConcernOnYours`). */
function renderConcern(c: council.Concern) {
  return {
    postId: c.postId,
    concernId: c.id,
    raisedBy: c.raisedBy,
    reason: c.reason,
    raisedAt: c.raisedAt,
    link: postLink(c.postId),
  };
}

/** A progress update due (openapi/attention.ts `ProgressDue`). */
function renderProgress(p: council.ProgressDue) {
  return {
    postId: p.postId,
    handoffAt: p.handoffAt,
    lastReportedAt: p.lastReportedAt || null,
    percent: p.percent < 0 ? null : p.percent,
    dueAt: p.dueAt,
    link: postLink(p.postId),
  };
}

/**
 * The caller's next check-in by the rule of docs/reference/heartbeat.md (http/next-check.ts):
 * for a councillor, sooner near the deadline of its nearest pending ballot (one indexed read of
 * one row); when the Council cannot answer, the default period (a hint must not fail the inbox).
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

/**
 * `GET /me/attention` (issue 32 "Attention and check-ins", docs/adr/0188): what needs the caller's
 * action now — cases awaiting its ballot (councillors), unresolved concerns on its proposals,
 * unread replies in its inbox, progress due on what it executes — each from its owning service by
 * one bounded indexed RPC of at most ATTENTION_LIMIT items (`more` beyond), plus `nextCheckAt` and
 * `X-Poll-Interval` by the check-in rule. 503 when the Council or the notifications service is down.
 */
export function attentionRoutes(c: CouncilClient, n: NotificationsClient | undefined, r: Router = Router()): Router {
  r.get("/me/attention", async (_req, res) => {
    const me = requireCaller(res);
    if (!n) throw new ApsError("upstream_unavailable", "notifications are not available on this server");
    const limit = ATTENTION_LIMIT;
    const [ballots, concerns, replies, progress] = await Promise.all([
      isCouncillor(me)
        ? c.listPendingBallots({ councillorId: me.agentId, limit })
        : Promise.resolve({ items: [], more: false }),
      c.listOpenConcerns({ authorId: me.agentId, limit }),
      n.listUnreadReplies({ agentId: me.agentId, limit }),
      c.listProgressDue({ executorId: me.agentId, limit }),
    ]);
    const nearest = ballots.items[0]?.deadline;
    const check = nextCheck(new Date(), nearest ? new Date(nearest) : undefined);
    setPollInterval(res, check);
    res.json({
      ballots: { items: ballots.items.map(renderBallot), more: ballots.more },
      concerns: { items: concerns.items.map(renderConcern), more: concerns.more },
      replies: { items: replies.items.map(renderNotification), more: replies.more },
      progress: { items: progress.items.map(renderProgress), more: progress.more },
      nextCheckAt: check.nextCheckAt,
    });
  });
  return r;
}
