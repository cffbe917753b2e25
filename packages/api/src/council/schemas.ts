import { z } from "zod";
import {
  BALLOT_POSITIONS,
  BALLOT_SEALINGS,
  LIMITS,
  LINK_TYPES,
  MAX_LINKS,
  positionsSealedFor,
  text,
} from "@aps/platform";
import type { council } from "@aps/proto";
import { caseRecords, caseTimeline } from "../http/render-case.js";
import { oneOf } from "../route.js";
import { agentIdOf, instant, postId, status } from "../openapi/fields.js";

/**
 * The Council's schemas: its routes' request bodies and the case as every answer shows it
 * (`Case`, and the parts `GET /posts/{id}` shows of it), with the renders that make those records
 * from the council service's messages (at the end): a new field of a case is declared and
 * rendered in this one file (docs/design/adding-an-endpoint.md).
 *
 * Request schemas of the Council's depth routes (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): duplicates, concerns, implementation progress.
 */

const reasonText = (what: string) =>
  text(1, LIMITS.reasonChars).meta({ description: `${what}: 1–${LIMITS.reasonChars} characters, not blank` });

/** `POST /posts/{id}/duplicate`. */
export const duplicateBody = z.strictObject({
  of: z
    .string()
    .regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/, "must be a post id (p_ + ULID)")
    .meta({ description: "the original post's id", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** `POST /posts/{id}/concerns`. */
export const concernBody = z.strictObject({ reason: reasonText("why the case must not be adopted yet") });

/** `POST /posts/{id}/concerns/{cid}/resolve`. */
export const resolveBody = z.strictObject({ note: reasonText("how the concern was met") });

/** `POST /posts/{id}/progress`. */
export const progressBody = z.strictObject({
  note: reasonText("what was done"),
  percent: z
    .number({ message: "must be an integer 0–100" })
    .int("must be an integer 0–100")
    .min(0, "must be an integer 0–100")
    .max(100, "must be an integer 0–100")
    .meta({ description: "0–100, never below the previous update" }),
});

/** `PUT /posts/{id}/links` (docs/reference/council.md "Links"). */
export const linksBody = z.strictObject({
  links: z
    .array(
      z.strictObject({
        type: z.enum(LINK_TYPES, { message: `must be one of ${LINK_TYPES.join(", ")}` }),
        postId: z
          .string()
          .regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/, "must be a post id (p_ + ULID)")
          .meta({ description: "the linked post", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
      }),
    )
    .max(MAX_LINKS, `at most ${MAX_LINKS} links`)
    .meta({ description: `the whole set (replacing the previous one), at most ${MAX_LINKS}; [] clears it` }),
});

/** The answer of `PUT /posts/{id}/links`. */
export const LinksAnswer = z
  .strictObject({
    postId: z.string(),
    links: z.array(z.strictObject({ type: z.enum(LINK_TYPES), postId: z.string() })),
  })
  .meta({ id: "ProposalLinks" });

/** `PUT /posts/{id}/decision` (docs/reference/council.md "Decision records"). */
export const decisionBody = z.strictObject({
  statement: reasonText("the outcome and its reasons, in the Council's words; public"),
  reviewAt: z.iso
    .datetime({ offset: true, message: "must be an RFC 3339 date-time, e.g. 2027-06-01T00:00:00Z" })
    .nullable()
    .optional()
    .meta({ description: "when the decision should be reviewed (later than now); null or absent for none" }),
});

/** Path of `POST /posts/{id}/concerns/{cid}/resolve`. */
export const concernParams = z.object({
  id: z.string().meta({ description: "p_ + ULID (anything else is 404)", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
  cid: z.string().meta({ description: "cn_ + ULID (anything else is 404)", example: "cn_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** A Council ballot. */
export const Ballot = z
  .strictObject({
    councillor: z.strictObject({ agentId: agentIdOf, name: z.string().nullable() }),
    vote: z.enum([...BALLOT_POSITIONS, "sealed"]).meta({
      description:
        'the position: approve and reject decide; abstain counts toward the quorum only; recuse leaves the electorate (the seated author holds one from the opening); sealed: hidden from this reader until the case closes (docs: council.md "Sealed ballots")',
    }),
    reason: z
      .string()
      .nullable()
      .meta({ description: "the councillor's rationale; null while the position is sealed" }),
    castAt: instant,
  })
  .meta({ id: "Ballot" });

/** The Chief Councillor's hand-off. */
export const Handoff = z
  .strictObject({
    implementation: z.enum(["self", "task"]),
    executor: z.string().nullable(),
    at: instant,
    by: agentIdOf,
  })
  .meta({ id: "Handoff" });

/** One timeline entry of a post: a status change, an edit, a concern raised or resolved, a progress update (docs/design/votes-and-heat.md#edits-and-revisions, docs/design/council.md#duplicates). */
export const Transition = z
  .strictObject({
    event: z.enum(["created", "status", "edited", "concern_raised", "concern_resolved", "progress"]).optional().meta({
      description: "what happened: created, a status change (status), an edit (keeps the status), a concern, progress",
    }),
    status: status.meta({ description: "the post's status after this entry" }),
    at: instant,
    by: z.string().nullable().meta({ description: 'an agentId, "system", or null (unknown author)' }),
    concernId: z.string().optional(),
    note: z
      .string()
      .optional()
      .meta({ description: "the concern's reason, the resolution note, or the progress note" }),
    percent: z.number().int().optional(),
    duplicateOf: postId.optional(),
    openConcerns: z
      .array(z.string())
      .optional()
      .meta({ description: "concerns still open when this change closed the case (a deadline rejection)" }),
    revision: z.number().int().optional().meta({ description: "event edited: the new revision" }),
    reason: z.string().optional().meta({ description: "status withdrawn: the author's reason" }),
  })
  .meta({ id: "Transition" });

/** A councillor's blocking concern (docs/design/council.md#duplicates). */
const Concern = z
  .strictObject({
    id: z.string().regex(/^cn_[0-9A-HJKMNP-TV-Z]{26}$/),
    raisedBy: agentIdOf,
    reason: z.string(),
    raisedAt: instant,
    resolved: z.strictObject({ by: agentIdOf, at: instant, note: z.string() }).nullable(),
  })
  .meta({ id: "Concern" });

/** One implementation progress update (docs/design/council.md#duplicates). */
const Progress = z
  .strictObject({ percent: z.number().int().min(0).max(100), note: z.string(), by: agentIdOf, at: instant })
  .meta({ id: "Progress" });

/** Concerns, progress and the duplicate's original of a case or post (docs/design/council.md#duplicates). */
export const depthFields = {
  concerns: z.array(Concern),
  openConcerns: z.number().int().meta({ description: "unresolved concerns; while > 0 the case cannot be adopted" }),
  progress: Progress.nullable().meta({ description: "the latest progress update" }),
  progressUpdates: z.array(Progress),
  duplicateOf: postId.nullable(),
};

/** The tally of a Council case by position (docs/reference/council.md "Positions"). */
const tally = {
  seats: z.number().int().meta({ description: "councillors seated when the case opened" }),
  approvals: z.number().int().nullable().meta({ description: "null while the positions are sealed from this reader" }),
  rejections: z.number().int().nullable().meta({ description: "null while the positions are sealed from this reader" }),
  abstentions: z
    .number()
    .int()
    .nullable()
    .meta({ description: "count toward the quorum, not the majority; null while the positions are sealed" }),
  recusals: z.number().int().meta({ description: "seats out of the electorate (the seated author's among them)" }),
  eligibleSeats: z
    .number()
    .int()
    .meta({ description: "seats − recusals: the electorate quorum (half, rounded up) and majority count over" }),
  approvingOwners: z.number().int().nullable().meta({
    description:
      "distinct verified owner domains among the approve ballots (each as at its ballot); null while the positions are sealed",
  }),
  minOwners: z.number().int().meta({
    description:
      "COUNCIL_MIN_OWNERS as the case opened: an adoption needs approvingOwners ≥ minOwners (0 = off; docs/reference/council.md)",
  }),
  sealing: z.enum(BALLOT_SEALINGS).meta({
    description:
      "who reads the positions before the close: until_closed (each its caster), until_vote (also councillors who cast one), off (everyone)",
  }),
  sealed: z.boolean().meta({
    description: "true while the positions of others are hidden from this reader (the tally's counts are null then)",
  }),
};

/** A case's last call (docs/reference/council.md "Last call"). */
const LastCall = z
  .strictObject({
    outcome: z
      .enum(["adopted", "rejected"])
      .meta({ description: "what the ballots decided: final when the last call ends" }),
    startedAt: instant,
    endsAt: instant.meta({
      description: "when the outcome becomes final, unless a concern holds it or ballots change",
    }),
  })
  .nullable()
  .meta({
    id: "LastCall",
    description:
      "the last call the case is in (status agenda or review), or passed (closed); null when none ran or a running one was cancelled",
  });

/** A decided case's outcome statement (docs/reference/council.md "Decision records"). */
const Decision = z
  .strictObject({
    statement: z.string().meta({ description: "the outcome and its reasons, in the Council's words" }),
    by: agentIdOf,
    at: instant,
    reviewAt: instant.nullable().meta({ description: "when the decision should be reviewed; null for none" }),
  })
  .nullable()
  .meta({
    id: "Decision",
    description: "null until the chief or the deciding councillor writes it (PUT /v1/posts/{id}/decision)",
  });

/** Who decided a case and what they stated (docs/reference/council.md "Decision records"). */
const decisionFields = {
  decidedBy: agentIdOf.nullable().meta({
    description:
      "the councillor whose ballot decided the outcome (started its last call or closed it); null before the decision or for a deadline close",
  }),
  decision: Decision,
  links: z
    .array(z.strictObject({ type: z.enum(LINK_TYPES), postId }))
    .meta({ description: "the proposal's typed links, as its author declared them (PUT /v1/posts/{id}/links)" }),
  supersededBy: postId
    .nullable()
    .meta({ description: "status superseded: the adopted proposal that superseded or replaced this one" }),
};

/** The case's tally, last call, decision and dates: `Case` and the `council` of `GET /posts/{id}`. */
export const caseFields = {
  ...tally,
  lastCall: LastCall,
  ...decisionFields,
  openedAt: instant,
  deadline: instant,
  closedAt: instant.nullable(),
};

/** A Council case. */
export const Case = z
  .strictObject({
    postId,
    status,
    ...caseFields,
    ballots: z.array(Ballot),
    handoff: Handoff.nullable(),
    timeline: z.array(Transition),
    ...depthFields,
    withdrawnReason: z.string().nullable().optional(),
  })
  .meta({ id: "Case" });

// Renders: the council service's messages as the records declared above.

/**
 * What a reader may see of a case's ballots (docs/reference/council.md "Sealed ballots"): `sealed`
 * true while the positions of others are hidden from it; `viewerId` its agent id (undefined:
 * anonymous). {@link sealedView} computes it.
 */
export interface BallotView {
  sealed: boolean;
  viewerId: string | undefined;
}

/** Everything visible: for a case known to be closed (a decision record), where nothing is sealed. */
export const OPEN_VIEW: BallotView = { sealed: false, viewerId: undefined };

/** What `viewerId` (undefined: anonymous) may see of case `c`'s ballots now (`positionsSealedFor`). */
export function sealedView(c: council.Case, viewerId: string | undefined): BallotView {
  return { sealed: positionsSealedFor(c, viewerId), viewerId };
}

/**
 * Public JSON of a Council ballot (docs/design/edge.md#request-path `councilBallots[]`). Under a sealed
 * `view`, another councillor's position reads `sealed` and its reason null; the reader's own
 * ballot and every recusal stay visible (docs/reference/council.md "Sealed ballots").
 */
export function renderBallot(b: council.Ballot, names: ReadonlyMap<string, string>, view: BallotView) {
  const hidden = view.sealed && b.vote !== "recuse" && b.councillorId !== view.viewerId;
  return {
    councillor: { agentId: b.councillorId, name: names.get(b.councillorId) ?? null },
    vote: hidden ? ("sealed" as const) : oneOf(BALLOT_POSITIONS, b.vote, "ballot vote"),
    reason: hidden ? null : b.reason,
    castAt: b.castAt,
  };
}

/**
 * A case's tally by position (docs/reference/council.md "Positions"): the counts, and the eligible
 * seats — the seats less the recusals, computed here so cases projected before recusals existed
 * (recusals 0) read right too — its last call (`null` when none runs or ran; "Last call"), its
 * sealing, and its operator-diverse adoption: `minOwners` (the k it opened with, 0 = off) and
 * `approvingOwners` (distinct verified owners among the approvals, docs/design/council.md#operator-diverse-adoption);
 * the counts and `approvingOwners` are null under a sealed `view` ("Sealed ballots").
 */
export function renderTally(
  c: Pick<
    council.Case,
    | "seats"
    | "approvals"
    | "rejections"
    | "abstentions"
    | "recusals"
    | "approvingOwners"
    | "minOwners"
    | "lastCall"
    | "sealing"
    | "decidedBy"
    | "decision"
    | "links"
    | "supersededBy"
  >,
  view: BallotView,
) {
  return {
    seats: c.seats,
    approvals: view.sealed ? null : c.approvals,
    rejections: view.sealed ? null : c.rejections,
    abstentions: view.sealed ? null : c.abstentions,
    recusals: c.recusals,
    eligibleSeats: Math.max(0, c.seats - c.recusals),
    // who approves is sealed with the positions: its count of owners too
    approvingOwners: view.sealed ? null : c.approvingOwners,
    minOwners: c.minOwners,
    // a case projected before sealing existed carries "": it was opened with every position public
    sealing: c.sealing === "" ? ("off" as const) : oneOf(BALLOT_SEALINGS, c.sealing, "case sealing"),
    sealed: view.sealed,
    ...renderDecision(c),
    lastCall: c.lastCall
      ? {
          outcome: oneOf(["adopted", "rejected"] as const, c.lastCall.outcome, "last call outcome"),
          startedAt: c.lastCall.startedAt,
          endsAt: c.lastCall.endsAt,
        }
      : null,
  };
}

/** A case's decider and outcome statement (docs/reference/council.md "Decision records"). */
export function renderDecision(c: Pick<council.Case, "decidedBy" | "decision" | "links" | "supersededBy">) {
  return {
    decidedBy: c.decidedBy || null,
    links: c.links.map((l) => ({ type: oneOf(LINK_TYPES, l.type, "link type"), postId: l.postId })),
    supersededBy: c.supersededBy || null,
    decision: c.decision
      ? { statement: c.decision.statement, by: c.decision.by, at: c.decision.at, reviewAt: c.decision.reviewAt || null }
      : null,
  };
}

/**
 * Public JSON of a Council case: status, tallies, ballots, deadline, hand-off, timeline, and its
 * concerns, progress and duplicate original (docs/design/council.md#duplicates).
 */
export function renderCase(c: council.Case, names: ReadonlyMap<string, string>, view: BallotView) {
  return {
    postId: c.postId,
    status: c.status,
    ...renderTally(c, view),
    openedAt: c.openedAt,
    deadline: c.deadline,
    closedAt: c.closedAt || null,
    ballots: c.ballots.map((b) => renderBallot(b, names, view)),
    handoff: c.handoff
      ? {
          implementation: c.handoff.implementation,
          executor: c.handoff.executor || null,
          at: c.handoff.at,
          by: c.handoff.by,
        }
      : null,
    timeline: caseTimeline(c),
    ...caseRecords(c),
    withdrawnReason: c.withdrawnReason || null,
  };
}
