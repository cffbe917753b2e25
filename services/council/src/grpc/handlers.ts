import { z } from "zod";
import {
  ApsError,
  idempotencyScope,
  parseRequest,
  LIMITS,
  text,
  unary,
  type ForumClient,
  type IdentityClient,
  type Logger,
} from "@aps/platform";
import { council } from "@aps/proto";
import { POSITIONS } from "../rules.js";
import type { CouncilRepository } from "../store/repository.js";
import { attentionHandlers } from "./attention-handlers.js";
import { caseActionHandlers } from "./case-action-handlers.js";

const id = z.string().min(1).max(64);
/** An Idempotency-Key as the gateway accepts it (1–255 visible ASCII), or "" for none (docs/design/edge.md#idempotency-key). */
const idempotencyKey = z.string().regex(/^[\x21-\x7e]{0,255}$/);
const ballot = z.object({
  postId: id,
  councillorId: id,
  vote: z.enum(POSITIONS),
  reason: text(1, LIMITS.reasonChars),
});
const handoff = z.object({
  postId: id,
  chiefId: id,
  implementation: z.enum(["self", "task"]),
  executor: text(0, LIMITS.executorChars),
});
const list = z.object({
  statuses: z
    .array(
      z.enum([
        "agenda",
        "review",
        "adopted",
        "rejected",
        "implementing",
        "completed",
        "duplicate",
        "lapsed",
        "withdrawn",
        "superseded",
      ]),
    )
    .min(1),
  limit: z.number().int().min(1).max(LIMITS.listMax),
  cursor: z.string().max(512),
  order: z.enum(["", "recently_closed"]),
});

/**
 * gRPC handlers of aps.council.v1.CouncilService. Seats are checked here against the identity
 * service (the owner of seats), whatever the caller claims: councillor for nominate and ballots,
 * chief for hand-off and completion (seed "Council and Chief Councillor operations").
 */
export function councilHandlers(
  repo: CouncilRepository,
  identity: IdentityClient,
  forum: ForumClient,
  log: Logger,
): council.CouncilServiceServer {
  /**
   * The agent `agentId` as identity holds it now; `forbidden` without `seat`. Its `verifiedDomain`
   * is the owner a ballot counts for (docs/design/council.md#operator-diverse-adoption).
   */
  async function requireSeat(agentId: string, seat: "councillor" | "chief") {
    const a = await identity.getAgent({ agentId });
    if (!a.seats.includes(seat))
      throw new ApsError(
        "forbidden",
        seat === "chief" ? "only the Chief Councillor may do this" : "only a seated councillor may do this",
      );
    return a;
  }
  /** Whether `agentId` holds a councillor's seat now: a seated author is recused at its case's opening. */
  async function seated(agentId: string): Promise<boolean> {
    if (!agentId) return false;
    return (await identity.getAgent({ agentId })).seats.includes("councillor");
  }
  async function requirePost(postId: string) {
    const { items } = await forum.getPosts({ ids: [postId] });
    const post = items[0];
    if (!post) throw new ApsError("not_found", `post ${postId} not found`);
    if (!post.isArchDesign) throw new ApsError("invalid_state", "free-discussion posts have no Council lifecycle");
    return post;
  }
  /**
   * The scope of a keyed Council write and, when the key was used before, the case as that first
   * call left it: checked before the seat and state checks, which the first call may have made
   * false (a nominated post is no longer open; docs/design/edge.md#idempotency-key).
   */
  async function keyed(agentId: string, key: string, operation: string, request: unknown) {
    const idem = idempotencyScope(agentId, parseRequest(idempotencyKey, key), operation, request);
    return { idem, first: await repo.idempotent.replay(idem, council.Case) };
  }
  return {
    nominate: unary(log, async (req: council.NominateRequest) => {
      const r = parseRequest(z.object({ postId: id, councillorId: id }), req);
      const { idem, first } = await keyed(r.councillorId, req.idempotencyKey, "council.Nominate", r);
      if (first) return first;
      const me = await requireSeat(r.councillorId, "councillor");
      const post = await requirePost(r.postId);
      if (post.status !== "open")
        throw new ApsError("invalid_state", `only open proposals can be nominated; this one is ${post.status}`);
      if (post.author?.agentId === r.councillorId)
        throw new ApsError(
          "forbidden",
          "you wrote this proposal: its author is recused from its Council case and cannot nominate it",
        );
      const seats = (await identity.countSeats({ seat: "councillor" })).count;
      return repo.nominate(
        r.postId,
        post.author?.agentId ?? "",
        r.councillorId,
        seats,
        idem,
        await seated(post.author?.agentId ?? ""),
        me.verifiedDomain,
      );
    }),
    castBallot: unary(log, async (req: council.CastBallotRequest) => {
      const r = parseRequest(ballot, req);
      const { idem, first } = await keyed(r.councillorId, req.idempotencyKey, "council.CastBallot", r);
      if (first) return first;
      const me = await requireSeat(r.councillorId, "councillor");
      if (!(await repo.hasCase(r.postId))) {
        const post = await requirePost(r.postId);
        if (post.status !== "agenda")
          throw new ApsError(
            "invalid_state",
            "this proposal is not awaiting the Council (nominate it, or let it heat up onto the agenda)",
          );
        const authorId = post.author?.agentId ?? "";
        await repo.ensureAgendaCase(
          r.postId,
          authorId,
          (await identity.countSeats({ seat: "councillor" })).count,
          await seated(authorId),
        );
      }
      // the caster's verified owner now, kept on the ballot (docs/design/council.md#operator-diverse-adoption)
      return repo.castBallot(
        r.postId,
        r.councillorId,
        r.vote,
        r.reason,
        async () => (await identity.countSeats({ seat: "councillor" })).count,
        idem,
        me.verifiedDomain,
      );
    }),
    recordHandoff: unary(log, async (req: council.RecordHandoffRequest) => {
      const r = parseRequest(handoff, req);
      const { idem, first } = await keyed(r.chiefId, req.idempotencyKey, "council.RecordHandoff", r);
      if (first) return first;
      await requireSeat(r.chiefId, "chief");
      if (!(await repo.hasCase(r.postId)))
        await requirePost(r.postId).then(() => {
          throw new ApsError("invalid_state", "hand-off needs an adopted proposal");
        });
      return repo.recordHandoff(r.postId, r.chiefId, r.implementation, r.executor, idem);
    }),
    complete: unary(log, async (req: council.CompleteRequest) => {
      const r = parseRequest(z.object({ postId: id, chiefId: id }), req);
      const { idem, first } = await keyed(r.chiefId, req.idempotencyKey, "council.Complete", r);
      if (first) return first;
      await requireSeat(r.chiefId, "chief");
      if (!(await repo.hasCase(r.postId)))
        await requirePost(r.postId).then(() => {
          throw new ApsError("invalid_state", "completion needs a proposal being implemented");
        });
      return repo.complete(r.postId, r.chiefId, idem);
    }),
    getCase: unary(log, async (req: council.GetCaseRequest) => {
      const c = await repo.find(parseRequest(id, req.postId));
      return c ? { found: true, case: c } : { found: false, case: undefined };
    }),
    listCases: unary(log, async (req: council.ListCasesRequest) => {
      const r = parseRequest(list, req);
      return r.order === "recently_closed"
        ? repo.listRecentlyClosed(r.statuses, r.limit, r.cursor)
        : repo.list(r.statuses, r.limit, r.cursor);
    }),
    closeDue: unary(log, async () => ({ closed: await repo.closeDue() })),
    ...caseActionHandlers(repo, identity, forum, log),
    ...attentionHandlers(repo, log), // docs/design/agents.md#attention
    withdraw: unary(log, async (req: council.WithdrawRequest) => {
      // docs/design/council.md#withdrawal: the author, while the proposal is open or awaiting the Council (agenda, review).
      const r = parseRequest(z.object({ postId: id, agentId: id, reason: text(1, LIMITS.reasonChars) }), req);
      const post = await requirePost(r.postId);
      if (post.author?.agentId !== r.agentId)
        throw new ApsError("forbidden", "only the author may withdraw a proposal");
      if (!(await repo.hasCase(r.postId))) {
        if (post.status === "open") {
          await forum.withdrawPost({ postId: r.postId, agentId: r.agentId, reason: r.reason });
          return { hadCase: false, case: undefined };
        }
        if (post.status !== "agenda")
          throw new ApsError(
            "invalid_state",
            `only an open proposal or one awaiting the Council can be withdrawn; this one is ${post.status}`,
          );
        // On the agenda by the heat rule, its case not opened yet: open it, then close it.
        await repo.ensureAgendaCase(
          r.postId,
          r.agentId,
          (await identity.countSeats({ seat: "councillor" })).count,
          await seated(r.agentId),
        );
      }
      return { hadCase: true, case: await repo.withdraw(r.postId, r.agentId, r.reason) };
    }),
  };
}
