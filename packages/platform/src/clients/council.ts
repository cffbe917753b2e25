import { council } from "@aps/proto";
import { callMethod } from "../grpc/client.js";
import type { CallerIdentity } from "../grpc/caller-auth.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";

/** Typed client of the council service; same error contract as IdentityClient. */
export class CouncilClient {
  private readonly c: Channel<typeof council.CouncilServiceDefinition>;
  private readonly conn: ServiceConnection<typeof council.CouncilServiceDefinition>;

  /** @param target `host:port` of the council gRPC server (`COUNCIL_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport). `caller`: who this process is, sent with every gRPC call (docs/design/services.md#caller-policy-and-internal-trust). `deadlineMs`: its calls' deadline, ms (`GRPC_DEADLINE_MS`; default 10 000). */
  constructor(
    target: ServiceTarget<typeof council.CouncilServiceDefinition>,
    caller?: CallerIdentity,
    deadlineMs?: number,
  ) {
    this.conn = connect(target, council.CouncilServiceClient, caller, deadlineMs);
    this.c = this.conn.methods;
  }

  nominate(req: council.NominateRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "nominate", req);
  }
  castBallot(req: council.CastBallotRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "castBallot", req);
  }
  recordHandoff(req: council.RecordHandoffRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "recordHandoff", req);
  }
  complete(req: council.CompleteRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "complete", req);
  }
  /** The author withdraws a proposal (docs/design/council.md#withdrawal): closes its open case as withdrawn, or withdraws it in the forum. */
  withdraw(req: council.WithdrawRequest): Promise<council.WithdrawResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "withdraw", req);
  }
  getCase(postId: string): Promise<council.GetCaseResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "getCase", { postId });
  }
  listCases(req: council.ListCasesRequest): Promise<council.ListCasesResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listCases", req);
  }
  raiseConcern(req: council.RaiseConcernRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "raiseConcern", req);
  }
  resolveConcern(req: council.ResolveConcernRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "resolveConcern", req);
  }
  reportProgress(req: council.ReportProgressRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "reportProgress", req);
  }
  markDuplicate(req: council.MarkDuplicateRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "markDuplicate", req);
  }
  /** Open cases awaiting `req.councillorId`'s ballot, nearest deadline first (docs/design/agents.md#attention). */
  listPendingBallots(req: council.ListPendingBallotsRequest): Promise<council.ListPendingBallotsResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listPendingBallots", req);
  }
  /** Unresolved concerns on `req.authorId`'s open cases, oldest first (docs/design/agents.md#attention). */
  listOpenConcerns(req: council.ListOpenConcernsRequest): Promise<council.ListOpenConcernsResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listOpenConcerns", req);
  }
  /** Implementing cases whose progress update from `req.executorId` is due (docs/design/agents.md#attention). */
  listProgressDue(req: council.ListProgressDueRequest): Promise<council.ListProgressDueResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listProgressDue", req);
  }
  /** Cases in their last call, nearest end first: every one for a councillor, else the caller's own. */
  listLastCalls(req: council.ListLastCallsRequest): Promise<council.ListLastCallsResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listLastCalls", req);
  }
  /** Decisions due for review (docs/reference/council.md "Decision records"): every one for a councillor, else the caller's own. */
  listReviewsDue(req: council.ListReviewsDueRequest): Promise<council.ListReviewsDueResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listReviewsDue", req);
  }
  /** One keyset page of an agent's own ballots or concerns (GET /v1/me/export, docs/design/agents.md#an-agents-own-data). */
  listAgentRecords(req: council.ListAgentRecordsRequest): Promise<council.ListAgentRecordsResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "listAgentRecords", req);
  }
  /** Replaces a proposal's typed links (its author, before the decision). */
  setLinks(req: council.SetLinksRequest): Promise<council.SetLinksResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "setLinks", req);
  }
  /** Writes a decided case's outcome statement and review date (the chief or the deciding councillor). */
  recordDecision(req: council.RecordDecisionRequest): Promise<council.Case> {
    return callMethod(this.c, council.CouncilServiceDefinition, "recordDecision", req);
  }
  closeDue(): Promise<council.CloseDueResponse> {
    return callMethod(this.c, council.CouncilServiceDefinition, "closeDue", {});
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/design/operations.md#health-and-readiness); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  close(): void {
    this.conn.close();
  }
}
