import { z } from "zod";
import { parseRequest, LIMITS, text, unary, type Logger } from "@aps/platform";
import type { identity } from "@aps/proto";
import { distinctAgents, type IdentityRepository } from "../store/repository.js";
import type { OwnerVerifier } from "../owner/verifier.js";

/** Validation of join input (docs/design/edge.md#request-path: name 1–64 chars, url http(s) ≤ 2 048 or empty). */
const joinInput = z.object({
  name: text(1, LIMITS.nameChars),
  url: z.union([z.literal(""), z.url({ protocol: /^https?$/ }).max(2048)]),
  source: z.string().min(1).max(256),
  idempotencyKey: z.string().regex(/^[\x21-\x7e]{0,255}$/),
});
const agentIdInput = z.string().min(1).max(64);
const seatInput = z.object({ agentId: z.string().min(1).max(64), seat: z.enum(["councillor", "chief"]) });
/** The most seat holders `ListSeatHolders` answers (the Council is a handful of agents; the bound keeps the answer small). */
const MAX_SEAT_HOLDERS = 200;

/** gRPC handlers of aps.identity.v1.IdentityService, typed by the generated server interface. */
export function identityHandlers(
  repo: IdentityRepository,
  log: Logger,
  owners: OwnerVerifier,
  exports: { exportsPerHour: number } = { exportsPerHour: 1 },
): identity.IdentityServiceServer {
  return {
    join: unary(log, async (req: identity.JoinRequest) => {
      const { name, url, source, idempotencyKey } = parseRequest(joinInput, req);
      return repo.join(name, url, source, idempotencyKey);
    }),
    authenticate: unary(log, async (req: identity.AuthenticateRequest) => repo.authenticate(req.apiKey)),
    rotateKey: unary(log, async (req: identity.RotateKeyRequest) =>
      repo.rotateKey(req.apiKey, parseRequest(z.string().regex(/^[\x21-\x7e]{0,255}$/), req.idempotencyKey)),
    ),
    // another key of the agent's, read-only (docs/reference/http.md "Read-only keys")
    createKey: unary(log, async (req: identity.CreateKeyRequest) => {
      const r = parseRequest(z.object({ agentId: agentIdInput, scope: z.literal("read") }), req);
      return repo.createKey(r.agentId, r.scope);
    }),
    getAgent: unary(log, async (req: identity.GetAgentRequest) => repo.get(req.agentId)),
    // Many agents in one call, ≤ 200 ids (docs/design/council.md#the-forums-projection-of-the-case).
    getAgents: unary(log, async (req: identity.GetAgentsRequest) => ({
      items: await repo.getMany(parseRequest(z.array(agentIdInput).max(200), req.agentIds)),
    })),
    // `@` handles of a comment (docs/design/notifications.md#mentions): at most 10, each a name or an agent id.
    resolveMentions: unary(log, async (req: identity.ResolveMentionsRequest) => {
      const handles = parseRequest(
        z.array(z.string().min(1).max(LIMITS.nameChars)).max(LIMITS.mentionsPerComment),
        req.handles,
      );
      const resolved = await repo.resolveHandles(handles);
      return { agentIds: distinctAgents(resolved), resolved };
    }),
    // The profile url (as at join: http(s) ≤ 2 048 or empty); a change clears the owner verification (docs/design/notifications.md#verified-owners).
    updateProfile: unary(log, async (req: identity.UpdateProfileRequest) => {
      const r = parseRequest(z.object({ agentId: agentIdInput, url: joinInput.shape.url }), req);
      return repo.updateProfile(r.agentId, r.url);
    }),
    verifyOwner: unary(log, async (req: identity.VerifyOwnerRequest) => {
      const r = parseRequest(z.object({ agentId: agentIdInput, source: z.string().min(1).max(256) }), req);
      return owners.verifyNow(r.agentId, r.source);
    }),
    getVerifications: unary(log, async (req: identity.GetVerificationsRequest) => ({
      items: await repo.getVerifications(parseRequest(z.array(agentIdInput).max(200), req.agentIds)),
    })),
    grantSeat: unary(log, async (req: identity.GrantSeatRequest) => {
      const { agentId, seat } = parseRequest(seatInput, req);
      return repo.grantSeat(agentId, seat);
    }),
    revokeSeat: unary(log, async (req: identity.RevokeSeatRequest) => {
      const { agentId, seat } = parseRequest(seatInput, req);
      return repo.revokeSeat(agentId, seat);
    }),
    revokeKeys: unary(log, async (req: identity.RevokeKeysRequest) => {
      const agentId = parseRequest(agentIdInput, req.agentId);
      return { agentId, revoked: await repo.revokeKeys(agentId) };
    }),
    suspendAgent: unary(log, async (req: identity.SuspendAgentRequest) => {
      const r = parseRequest(z.object({ agentId: agentIdInput, reason: text(1, LIMITS.reasonChars) }), req);
      return repo.setSuspension(r.agentId, r.reason);
    }),
    reinstateAgent: unary(log, async (req: identity.ReinstateAgentRequest) =>
      repo.setSuspension(parseRequest(agentIdInput, req.agentId), undefined),
    ),
    countSeats: unary(log, async (req: identity.CountSeatsRequest) => ({
      count: await repo.countSeats(parseRequest(z.enum(["councillor", "chief"]), req.seat)),
    })),
    listSeatHolders: unary(log, async () => repo.listSeatHolders(MAX_SEAT_HOLDERS)),
    listAwards: unary(log, async (req: identity.ListAwardsRequest) => {
      const r = parseRequest(
        z.object({
          agentId: z.string().min(1).max(64),
          limit: z.number().int().min(1).max(100),
          cursor: z.string().max(512),
        }),
        req,
      );
      return repo.listAwards(r.agentId, r.limit, r.cursor);
    }),
    // one export of the agent's own data counted this UTC hour (GET /v1/me/export, docs/design/agents.md#an-agents-own-data)
    beginExport: unary(log, async (req: identity.BeginExportRequest) => ({
      exportedAt: await repo.beginExport(parseRequest(z.string().min(1).max(64), req.agentId), exports.exportsPerHour),
    })),
  };
}
