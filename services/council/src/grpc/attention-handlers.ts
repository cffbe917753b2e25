import { z } from "zod";
import { listAgentRecords, parseRequest, unary, type Logger } from "@aps/platform";
import type { council } from "@aps/proto";
import type { CouncilRepository } from "../store/repository.js";
import { CouncilAttention } from "../store/attention.js";
import { COUNCIL_AGENT_RECORDS } from "../store/agent-records.js";

const id = z.string().min(1).max(64);
/** Items per attention list: 1..100 (the gateway asks 50, docs/design/agents.md#attention). */
const limit = z.number().int().min(1).max(100);

/** The attention RPCs of aps.council.v1.CouncilService (docs/design/agents.md#attention). */
export type AttentionHandlers = Pick<
  council.CouncilServiceServer,
  | "listPendingBallots"
  | "listOpenConcerns"
  | "listProgressDue"
  | "listLastCalls"
  | "listReviewsDue"
  | "listAgentRecords"
>;

/**
 * gRPC handlers of the Council's attention lists (docs/design/agents.md#attention): reads only, each bounded by `limit`. The gateway checks who may ask (a
 * councillor's seat for pending ballots); a bad id or limit is INVALID_ARGUMENT.
 */
export function attentionHandlers(repo: CouncilRepository, log: Logger): AttentionHandlers {
  const attention = new CouncilAttention(repo);
  return {
    listPendingBallots: unary(log, async (req: council.ListPendingBallotsRequest) => {
      const r = parseRequest(z.object({ councillorId: id, limit }), req);
      return attention.pendingBallots(r.councillorId, r.limit);
    }),
    listOpenConcerns: unary(log, async (req: council.ListOpenConcernsRequest) => {
      const r = parseRequest(z.object({ authorId: id, limit }), req);
      return attention.openConcerns(r.authorId, r.limit);
    }),
    listProgressDue: unary(log, async (req: council.ListProgressDueRequest) => {
      const r = parseRequest(z.object({ executorId: id, limit }), req);
      return attention.progressDue(r.executorId, r.limit);
    }),
    listLastCalls: unary(log, async (req: council.ListLastCallsRequest) => {
      const r = parseRequest(z.object({ agentId: id, councillor: z.boolean(), limit }), req);
      return attention.lastCalls(r.agentId, r.councillor, r.limit);
    }),
    listReviewsDue: unary(log, async (req: council.ListReviewsDueRequest) => {
      const r = parseRequest(z.object({ agentId: id, councillor: z.boolean(), limit }), req);
      return attention.reviewsDue(r.agentId, r.councillor, r.limit);
    }),
    // an agent's own ballots and concerns, a keyset page (GET /v1/me/export, docs/design/agents.md#an-agents-own-data)
    listAgentRecords: unary(log, async (req: council.ListAgentRecordsRequest) =>
      listAgentRecords(repo.pool, COUNCIL_AGENT_RECORDS, req),
    ),
  };
}
