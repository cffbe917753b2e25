import { callRead, callUnary, CHANNEL_OPTIONS, insecure } from "../grpc/client.js";
import { HealthClient } from "../grpc/health.js";
import { identity } from "@aps/proto";

/**
 * Typed client of the identity service (one module per downstream service). Every call
 * has a deadline and rejects with ApsError (stable code kept; transport failures →
 * `upstream_unavailable`). Reads (authenticate, getAgent, countSeats, listAwards) go through
 * callRead — retried when the service was not reached; writes are never retried.
 */
export class IdentityClient {
  private readonly c: identity.IdentityServiceClient;
  private readonly health: HealthClient;

  /** @param addr `host:port` of the identity gRPC server (`IDENTITY_GRPC_ADDR`). */
  constructor(addr: string) {
    this.c = new identity.IdentityServiceClient(addr, insecure(), { ...CHANNEL_OPTIONS });
    this.health = new HealthClient(addr);
  }

  join(req: identity.JoinRequest): Promise<identity.JoinResponse> {
    return callUnary(this.c, this.c.join, req);
  }
  authenticate(apiKey: string): Promise<identity.Agent> {
    return callRead(this.c, this.c.authenticate, { apiKey });
  }
  /** Revokes `apiKey` and returns a new key for the same agent (UNAUTHENTICATED → 401 if already revoked). */
  rotateKey(apiKey: string): Promise<identity.RotateKeyResponse> {
    return callUnary(this.c, this.c.rotateKey, { apiKey });
  }
  getAgent(agentId: string): Promise<identity.Agent> {
    return callRead(this.c, this.c.getAgent, { agentId });
  }
  grantSeat(agentId: string, seat: string): Promise<identity.Agent> {
    return callUnary(this.c, this.c.grantSeat, { agentId, seat });
  }
  revokeSeat(agentId: string, seat: string): Promise<identity.Agent> {
    return callUnary(this.c, this.c.revokeSeat, { agentId, seat });
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/adr/0075); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.health.serving(ms);
  }
  countSeats(seat: string): Promise<number> {
    return callRead(this.c, this.c.countSeats, { seat }).then((r) => r.count);
  }
  listAwards(req: identity.ListAwardsRequest): Promise<identity.ListAwardsResponse> {
    return callRead(this.c, this.c.listAwards, req);
  }
  beginIdempotency(req: identity.BeginIdempotencyRequest): Promise<identity.IdempotencyRecord> {
    return callUnary(this.c, this.c.beginIdempotency, req);
  }
  finishIdempotency(req: identity.FinishIdempotencyRequest): Promise<identity.FinishIdempotencyResponse> {
    return callUnary(this.c, this.c.finishIdempotency, req);
  }
  close(): void {
    this.c.close();
    this.health.close();
  }
}
