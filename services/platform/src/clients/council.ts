import { council } from "@aps/proto";
import { callRead, callUnary, CHANNEL_OPTIONS, insecure } from "../grpc/client.js";
import { HealthClient } from "../grpc/health.js";

/** Typed client of the council service; same error contract as IdentityClient. */
export class CouncilClient {
  private readonly c: council.CouncilServiceClient;
  private readonly health: HealthClient;

  /** @param addr `host:port` of the council gRPC server (`COUNCIL_GRPC_ADDR`). */
  constructor(addr: string) {
    this.c = new council.CouncilServiceClient(addr, insecure(), { ...CHANNEL_OPTIONS });
    this.health = new HealthClient(addr);
  }

  nominate(req: council.NominateRequest): Promise<council.Case> {
    return callUnary(this.c, this.c.nominate, req);
  }
  castBallot(req: council.CastBallotRequest): Promise<council.Case> {
    return callUnary(this.c, this.c.castBallot, req);
  }
  recordHandoff(req: council.HandoffRequest): Promise<council.Case> {
    return callUnary(this.c, this.c.recordHandoff, req);
  }
  complete(req: council.CompleteRequest): Promise<council.Case> {
    return callUnary(this.c, this.c.complete, req);
  }
  getCase(postId: string): Promise<council.GetCaseResponse> {
    return callRead(this.c, this.c.getCase, { postId });
  }
  listCases(req: council.ListCasesRequest): Promise<council.ListCasesResponse> {
    return callRead(this.c, this.c.listCases, req);
  }
  closeDue(): Promise<council.CloseDueResponse> {
    return callUnary(this.c, this.c.closeDue, {});
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/adr/0075); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.health.serving(ms);
  }
  close(): void {
    this.c.close();
    this.health.close();
  }
}
