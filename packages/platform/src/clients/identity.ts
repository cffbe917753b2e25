import { callMethod } from "../grpc/client.js";
import type { CallerIdentity } from "../grpc/caller-auth.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";
import { identity } from "@aps/proto";

/**
 * Typed client of the identity service (one module per downstream service). Every call
 * has a deadline and rejects with ApsError (stable code kept; transport failures →
 * `upstream_unavailable`). Whether a call is retried when the service was not reached comes
 * from the .proto: methods declared `idempotency_level = NO_SIDE_EFFECTS` are (callMethod,
 * docs/design/services.md#retries-declared-in-the-proto); every other method is never retried.
 */
export class IdentityClient {
  private readonly c: Channel<typeof identity.IdentityServiceDefinition>;
  private readonly conn: ServiceConnection<typeof identity.IdentityServiceDefinition>;

  /** @param target `host:port` of the identity gRPC server (`IDENTITY_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport). `caller`: who this process is, sent with every gRPC call (docs/design/services.md#caller-policy-and-internal-trust). `deadlineMs`: its calls' deadline, ms (`GRPC_DEADLINE_MS`; default 10 000). */
  constructor(
    target: ServiceTarget<typeof identity.IdentityServiceDefinition>,
    caller?: CallerIdentity,
    deadlineMs?: number,
  ) {
    this.conn = connect(target, identity.IdentityServiceClient, caller, deadlineMs);
    this.c = this.conn.methods;
  }

  join(req: identity.JoinRequest): Promise<identity.JoinResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "join", req);
  }
  authenticate(apiKey: string): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "authenticate", { apiKey });
  }
  /**
   * Revokes `apiKey` and returns a new key for the same agent (UNAUTHENTICATED → 401 if already
   * revoked). With `idempotencyKey`, a retry within 5 minutes completes a rotation whose answer was
   * lost (docs/design/edge.md#authentication).
   */
  rotateKey(apiKey: string, idempotencyKey = ""): Promise<identity.RotateKeyResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "rotateKey", { apiKey, idempotencyKey });
  }
  /**
   * Issues another key for `agentId` that may only read (GET, HEAD; docs/reference/http.md
   * "Read-only keys"); the plaintext key is in the answer once. `invalid_state` past
   * MAX_READ_KEYS live read keys, `forbidden` for a suspended or revoked agent.
   */
  createKey(agentId: string, scope: "read"): Promise<identity.CreateKeyResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "createKey", { agentId, scope });
  }
  getAgent(agentId: string): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "getAgent", { agentId });
  }
  /**
   * The existing agents among `agentIds` (≤ 200; unknown ones left out), by id: names and owner
   * verifications of many agents in one call (docs/design/council.md#the-forums-projection-of-the-case).
   */
  async getAgents(agentIds: string[]): Promise<Map<string, identity.Agent>> {
    if (agentIds.length === 0) return new Map();
    const r = await callMethod(this.c, identity.IdentityServiceDefinition, "getAgents", { agentIds });
    return new Map(r.items.map((a) => [a.agentId, a]));
  }
  /** The agents `@` handles name, distinct, in order; unknown handles are left out (docs/design/notifications.md#mentions). */
  async resolveMentions(handles: string[]): Promise<string[]> {
    return (await this.resolveHandles(handles)).agentIds;
  }
  /** The agents `@` handles name, and which handle named which (docs/design/notifications.md#mentions). */
  resolveHandles(handles: string[]): Promise<identity.ResolveMentionsResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "resolveMentions", { handles });
  }
  /** Sets the agent's profile url; a changed url clears its owner verification (docs/design/notifications.md#verified-owners). */
  updateProfile(req: identity.UpdateProfileRequest): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "updateProfile", req);
  }
  /** Checks the agent's `/.well-known/aps-agent.json` now (docs/design/notifications.md#verified-owners); `rate_limited` past the hourly limits. */
  verifyOwner(req: identity.VerifyOwnerRequest): Promise<identity.VerifyOwnerResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "verifyOwner", req);
  }
  /** The verified agents among `agentIds` (≤ 200), by id, with their domain and instant. */
  async getVerifications(agentIds: string[]): Promise<Map<string, identity.Verification>> {
    if (agentIds.length === 0) return new Map();
    const r = await callMethod(this.c, identity.IdentityServiceDefinition, "getVerifications", { agentIds });
    return new Map(r.items.map((v) => [v.agentId, v]));
  }
  grantSeat(agentId: string, seat: string): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "grantSeat", { agentId, seat });
  }
  revokeSeat(agentId: string, seat: string): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "revokeSeat", { agentId, seat });
  }
  /** Revokes every valid key of `agentId` (owner action, docs/design/identity-and-abuse.md#suspension-and-revocation); NOT_FOUND → 404. */
  revokeKeys(agentId: string): Promise<identity.RevokeKeysResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "revokeKeys", { agentId });
  }
  /** Suspends `agentId` with `reason` (owner action, docs/design/identity-and-abuse.md#suspension-and-revocation); NOT_FOUND → 404. */
  suspendAgent(agentId: string, reason: string): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "suspendAgent", { agentId, reason });
  }
  /** Lifts a suspension of `agentId` (docs/design/identity-and-abuse.md#suspension-and-revocation); NOT_FOUND → 404. */
  reinstateAgent(agentId: string): Promise<identity.Agent> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "reinstateAgent", { agentId });
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/design/operations.md#health-and-readiness); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  countSeats(seat: string): Promise<number> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "countSeats", { seat }).then((r) => r.count);
  }
  /** The agents holding a Council seat, chief first (≤ 200; docs/reference/council.md "Who sits on the Council"). */
  listSeatHolders(): Promise<identity.ListSeatHoldersResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "listSeatHolders", {});
  }
  listAwards(req: identity.ListAwardsRequest): Promise<identity.ListAwardsResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "listAwards", req);
  }
  /** Counts one export of the agent's own data this hour (GET /v1/me/export); rejects `rate_limited` past EXPORTS_PER_AGENT_PER_HOUR. Never retried. */
  beginExport(agentId: string): Promise<identity.BeginExportResponse> {
    return callMethod(this.c, identity.IdentityServiceDefinition, "beginExport", { agentId });
  }
  close(): void {
    this.conn.close();
  }
}
