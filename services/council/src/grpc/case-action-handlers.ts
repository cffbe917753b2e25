import { z } from "zod";
import {
  ApsError,
  idempotencyScope,
  parseRequest,
  LIMITS,
  text,
  unary,
  LINK_TYPES,
  MAX_LINKS,
  type ForumClient,
  type IdentityClient,
  type Logger,
} from "@aps/platform";
import { council } from "@aps/proto";
import type { CouncilRepository } from "../store/repository.js";
import { CaseActions } from "../store/case-actions.js";

const id = z.string().min(1).max(64);
/** An Idempotency-Key as the gateway accepts it, or "" for none (docs/design/edge.md#idempotency-key). */
const idempotencyKey = z.string().regex(/^[\x21-\x7e]{0,255}$/);
const note = text(1, LIMITS.reasonChars);

/** The case-action RPCs (concerns, progress, duplicates) of aps.council.v1.CouncilService (docs/design/council.md#duplicates). */
export type CaseActionHandlers = Pick<
  council.CouncilServiceServer,
  "raiseConcern" | "resolveConcern" | "reportProgress" | "markDuplicate" | "recordDecision" | "setLinks"
>;

/**
 * gRPC handlers of the Council's case actions: concerns, progress, duplicates
 * (docs/reference/moderation-and-council-depth.md). Seats are checked against the identity service
 * whatever the caller claims, as for ballots.
 */
export function caseActionHandlers(
  repo: CouncilRepository,
  identity: IdentityClient,
  forum: ForumClient,
  log: Logger,
): CaseActionHandlers {
  const actions = new CaseActions(repo);
  const seatsOf = async (agentId: string) => (await identity.getAgent({ agentId })).seats;
  async function requireCouncillor(agentId: string): Promise<void> {
    if (!(await seatsOf(agentId)).includes("councillor"))
      throw new ApsError("forbidden", "only a seated councillor may do this");
  }
  async function keyed(agentId: string, key: string, operation: string, request: unknown) {
    const idem = idempotencyScope(agentId, parseRequest(idempotencyKey, key), operation, request);
    return { idem, first: await repo.idempotent.replay(idem, council.Case) };
  }
  async function postOf(postId: string) {
    const post = (await forum.getPosts({ ids: [postId] })).items[0];
    if (!post) throw new ApsError("not_found", `post ${postId} not found`);
    return post;
  }
  return {
    raiseConcern: unary(log, async (req: council.RaiseConcernRequest) => {
      const r = parseRequest(z.object({ postId: id, councillorId: id, reason: note }), req);
      const { idem, first } = await keyed(r.councillorId, req.idempotencyKey, "council.RaiseConcern", r);
      if (first) return first;
      await requireCouncillor(r.councillorId);
      if (!(await repo.hasCase(r.postId))) await postOf(r.postId); // not_found before invalid_state
      return actions.raiseConcern(r.postId, r.councillorId, r.reason, idem);
    }),
    resolveConcern: unary(log, async (req: council.ResolveConcernRequest) => {
      const r = parseRequest(z.object({ postId: id, concernId: id, agentId: id, note }), req);
      const { idem, first } = await keyed(r.agentId, req.idempotencyKey, "council.ResolveConcern", r);
      if (first) return first;
      const isChief = (await seatsOf(r.agentId)).includes("chief");
      return actions.resolveConcern(r.postId, r.concernId, r.agentId, isChief, r.note, idem);
    }),
    reportProgress: unary(log, async (req: council.ReportProgressRequest) => {
      const r = parseRequest(
        z.object({ postId: id, agentId: id, percent: z.number().int().min(0).max(100), note }),
        req,
      );
      const { idem, first } = await keyed(r.agentId, req.idempotencyKey, "council.ReportProgress", r);
      if (first) return first;
      if (!(await repo.hasCase(r.postId))) await postOf(r.postId);
      const isChief = (await seatsOf(r.agentId)).includes("chief");
      return actions.reportProgress(r.postId, r.agentId, isChief, r.percent, r.note, idem);
    }),
    setLinks: unary(log, async (req: council.SetLinksRequest) => {
      const r = parseRequest(
        z.object({
          postId: id,
          authorId: id,
          links: z.array(z.object({ type: z.enum(LINK_TYPES), postId: id })).max(MAX_LINKS),
        }),
        req,
      );
      const idem = idempotencyScope(
        r.authorId,
        parseRequest(idempotencyKey, req.idempotencyKey),
        "council.SetLinks",
        r,
      );
      const first = await repo.idempotent.replay(idem, council.SetLinksResponse);
      if (first) return first;
      if (r.links.some((l) => l.postId === r.postId))
        throw new ApsError("invalid_request", "body.links: a proposal cannot link to itself");
      const targets = [...new Set(r.links.map((l) => l.postId))];
      const { items } = await forum.getPosts({ ids: [r.postId, ...targets] });
      const post = items.find((p) => p.id === r.postId);
      if (!post) throw new ApsError("not_found", `post ${r.postId} not found`);
      if (post.author?.agentId !== r.authorId)
        throw new ApsError("forbidden", "only the author of a proposal may declare its links");
      if (!post.isArchDesign)
        throw new ApsError("invalid_state", "a free-discussion post has no Council record to link from");
      const missing = targets.filter((t) => !items.some((p) => p.id === t));
      if (missing.length > 0) throw new ApsError("not_found", `no such post to link to: ${missing.join(", ")}`);
      return actions.setLinks(r.postId, r.authorId, post.status, r.links, idem);
    }),
    recordDecision: unary(log, async (req: council.RecordDecisionRequest) => {
      const r = parseRequest(
        z.object({
          postId: id,
          agentId: id,
          statement: note,
          reviewAt: z.union([z.literal(""), z.iso.datetime({ offset: true })]),
        }),
        req,
      );
      const { idem, first } = await keyed(r.agentId, req.idempotencyKey, "council.RecordDecision", r);
      if (first) return first;
      if (!(await repo.hasCase(r.postId))) await postOf(r.postId); // not_found before invalid_state
      const isChief = (await seatsOf(r.agentId)).includes("chief");
      return actions.recordDecision(
        r.postId,
        r.agentId,
        isChief,
        r.statement,
        r.reviewAt === "" ? null : new Date(r.reviewAt),
        idem,
      );
    }),
    markDuplicate: unary(log, async (req: council.MarkDuplicateRequest) => {
      const r = parseRequest(z.object({ postId: id, councillorId: id, duplicateOf: id }), req);
      const { idem, first } = await keyed(r.councillorId, req.idempotencyKey, "council.MarkDuplicate", r);
      if (first) return first;
      await requireCouncillor(r.councillorId);
      if (r.duplicateOf === r.postId)
        throw new ApsError("invalid_request", "body.of: a post cannot be a duplicate of itself");
      const { items } = await forum.getPosts({ ids: [r.postId, r.duplicateOf] });
      const post = items.find((p) => p.id === r.postId);
      if (!post) throw new ApsError("not_found", `post ${r.postId} not found`);
      if (!items.some((p) => p.id === r.duplicateOf))
        throw new ApsError("not_found", `the original named in \`of\`, ${r.duplicateOf}, does not exist`);
      return actions.markDuplicate(
        r.postId,
        post.author?.agentId ?? "",
        post.status,
        r.duplicateOf,
        r.councillorId,
        idem,
      );
    }),
  };
}
