/**
 * The proposal lifecycle, written out once (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/council.md#statuses-and-the-lifecycle-rule).
 * The council owns a case's status; the forum's `posts.status`, the search index and the gateway's
 * pages follow it with the two functions below and never decide a status of their own.
 */

/** Every status of a post, in lifecycle order (`discussion`: a free post, outside the lifecycle). */
export const POST_STATUSES = [
  "discussion",
  "open",
  "agenda",
  "review",
  "adopted",
  "rejected",
  "withdrawn",
  "lapsed",
  "implementing",
  "completed",
  "duplicate",
  "superseded",
] as const;

/** A status of {@link POST_STATUSES}. */
export type PostStatus = (typeof POST_STATUSES)[number];

/**
 * Rank of each status in the lifecycle: a status only ever moves to a higher rank. `adopted`,
 * `rejected`, `withdrawn` (the author withdrew it, docs/design/council.md#withdrawal) and `lapsed` (no Council ballot
 * by the deadline, docs/design/council.md#lapse) share a rank (each closes a case; none follows another);
 * `discussion` and `open` share the start.
 */
export const STATUS_RANK: Readonly<Record<PostStatus, number>> = {
  discussion: 0,
  open: 0,
  agenda: 1,
  review: 2,
  adopted: 3,
  rejected: 3,
  withdrawn: 3,
  // The deadline passed with no Council ballot: no outcome, no Sagacity, final (docs/design/council.md#lapse).
  lapsed: 3,
  implementing: 4,
  completed: 5,
  // A councillor closed it as a duplicate of another post before any decision (docs/design/council.md#duplicates).
  duplicate: 3,
  // A later adopted proposal supersedes or replaces this decided one (docs/reference/council.md "Links").
  superseded: 6,
};

/** True for a status name of the lifecycle. */
export function isPostStatus(s: string): s is PostStatus {
  return (POST_STATUSES as readonly string[]).includes(s);
}

/**
 * True when moving from `current` to `next` goes forward in the lifecycle (a projection applies
 * only such moves, so late, replayed or reordered events change nothing). A `discussion` post never
 * enters the lifecycle (it may only be closed as a `duplicate`); an unknown `next` never moves; an unknown `current` is treated as final.
 */
export function movesForward(current: string, next: string): boolean {
  if (!isPostStatus(next) || !isPostStatus(current)) return false;
  // A free post leaves `discussion` only as a duplicate (docs/design/council.md#duplicates).
  if (current === "discussion") return next === "duplicate";
  return STATUS_RANK[next] > STATUS_RANK[current];
}

/**
 * The status to show for a post: its case's status when the council has a case (the council owns
 * it, and its answer is never behind), else the forum's own (`open` or `discussion`, or a status
 * the projection already has). Whichever is further along wins, so a read that races an event
 * never shows a status going backwards.
 */
export function effectiveStatus(postStatus: string, caseStatus: string | undefined): string {
  if (caseStatus === undefined || caseStatus === "") return postStatus;
  return movesForward(caseStatus, postStatus) ? postStatus : caseStatus;
}

/**
 * The positions a councillor's ballot may take (docs/reference/council.md "Positions"): approve
 * and reject decide; abstain counts toward the quorum only; recuse leaves the electorate (the
 * seated author of a proposal holds one from its case's opening).
 */
export const BALLOT_POSITIONS = ["approve", "reject", "abstain", "recuse"] as const;
/** One of {@link BALLOT_POSITIONS}. */
export type BallotPosition = (typeof BALLOT_POSITIONS)[number];

/**
 * Who may read a ballot's position and reason before its case closes (docs/reference/council.md
 * "Sealed ballots", after Loomio's hidden results): `until_closed` its caster only (the default),
 * `until_vote` also every councillor who has cast a position on the case, `off` everyone. A
 * recusal is never sealed. A case keeps the sealing it opened with.
 */
export const BALLOT_SEALINGS = ["until_closed", "until_vote", "off"] as const;
/** One of {@link BALLOT_SEALINGS}. */
export type BallotSealing = (typeof BALLOT_SEALINGS)[number];

/**
 * Whether `viewerId` (undefined: an anonymous reader) may not see the positions of the case's
 * other councillors now (docs/reference/council.md "Sealed ballots"): its sealing is not `off`
 * (an unknown value seals too), it has not closed, and — under `until_vote` — the viewer has
 * not cast a position other than `recuse` on it.
 */
export function positionsSealedFor(
  c: { sealing: string; closedAt: string; ballots: readonly { councillorId: string; vote: string }[] },
  viewerId: string | undefined,
): boolean {
  if (c.sealing === "off" || c.sealing === "" || c.closedAt !== "") return false;
  if (c.sealing === "until_vote" && viewerId !== undefined)
    return !c.ballots.some((b) => b.councillorId === viewerId && b.vote !== "recuse");
  return true;
}

/**
 * The typed links a proposal's author may declare to other posts (docs/reference/council.md
 * "Links", after PEP and KEP headers): `supersedes` and `replaces` make the target `superseded`
 * when this proposal is adopted (if the target was adopted, implementing or completed); `requires`
 * is recorded only.
 */
export const LINK_TYPES = ["supersedes", "requires", "replaces"] as const;
/** One of {@link LINK_TYPES}. */
export type LinkType = (typeof LINK_TYPES)[number];

/** Most typed links one proposal may declare. */
export const MAX_LINKS = 10;
