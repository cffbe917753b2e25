import { BALLOT_POSITIONS, type BallotPosition } from "@aps/platform";

/**
 * The Council's close rules (docs/design/council.md#statuses-and-the-lifecycle-rule; positions: docs/reference/council.md
 * "Positions"), as pure functions of a case's tally.
 */
export type Outcome = "adopted" | "rejected";

/** Every ballot position, in the order the API documents them (docs/reference/council.md "Positions"). */
export const POSITIONS = BALLOT_POSITIONS;

/** A ballot's position: approve and reject decide; abstain counts toward quorum only; recuse leaves the electorate. */
export type Position = BallotPosition;

/**
 * A case's tally: `seats` = councillors seated when the case opened; the other fields count the
 * ballots by position. The author of a proposal, when seated, holds a `recuse` ballot from the
 * case's opening (docs/reference/council.md "Positions"). `minOwners` is the k of
 * COUNCIL_MIN_OWNERS the case opened with (0 or absent: off) and `approvingOwners` the distinct
 * non-empty verified owner domains among its approve ballots, each taken at ballot time
 * (docs/design/council.md#operator-diverse-adoption).
 */
export interface Tally {
  seats: number;
  approvals: number;
  rejections: number;
  abstentions: number;
  recusals: number;
  approvingOwners?: number;
  minOwners?: number;
}

/** The seats that may decide: the seated councillors less those recused (never below 0). */
export function eligibleSeats(t: Tally): number {
  return Math.max(0, t.seats - t.recusals);
}

/** The quorum of a case: ceil(eligible seats / 2) ballots that approve, reject or abstain. */
export function quorum(t: Tally): number {
  return Math.ceil(eligibleSeats(t) / 2);
}

/**
 * Whether the approve ballots of `t` come from enough verified owners: at least `minOwners`
 * distinct non-empty verified domains (always true with `minOwners` 0 or absent;
 * docs/design/council.md#operator-diverse-adoption).
 */
export function ownersReached(t: Tally): boolean {
  return (t.approvingOwners ?? 0) >= (t.minOwners ?? 0);
}

/**
 * Decision right after a ballot, when no later ballot can change it: `adopted` once approvals
 * outnumber the rejections even if every eligible seat still to ballot rejects, the quorum is met
 * and the approvals come from `minOwners` distinct verified owners (`ownersReached`); `rejected`
 * once approvals cannot outnumber the rejections even if every remaining eligible seat approves
 * (ties reject), or — with `minOwners` k > 0 and at least one approve, reject or abstain ballot
 * cast — once the approving owners cannot reach k even if every remaining eligible seat approves
 * as a new owner; otherwise undefined (the case stays open: an approval majority short of owners
 * is not decisive, docs/design/council.md#operator-diverse-adoption). Abstentions count toward
 * the quorum, not the majority. While `openConcerns` > 0 a decisive approval waits (undefined) — a
 * blocking concern, after the Rust RFC process (docs/reference/moderation-and-council-depth.md); rejection does not. With no
 * eligible seat (all recused) nothing is decided by ballots: the deadline lapses the case.
 */
export function decisiveOutcome(t: Tally, openConcerns = 0): Outcome | undefined {
  const eligible = eligibleSeats(t);
  if (eligible === 0) return undefined;
  const cast = t.approvals + t.rejections + t.abstentions;
  const remaining = Math.max(0, eligible - cast);
  if (t.approvals > t.rejections + remaining && cast >= quorum(t) && ownersReached(t))
    return openConcerns > 0 ? undefined : "adopted";
  if (t.approvals + remaining <= t.rejections) return "rejected";
  if (cast > 0 && (t.approvingOwners ?? 0) + remaining < (t.minOwners ?? 0)) return "rejected";
  return undefined;
}

/**
 * How a case closes at its deadline: a Council outcome, or `lapsed` — the deadline passed with no
 * Council ballot, so the Council decided nothing (docs/design/council.md#lapse).
 */
export type DeadlineOutcome = Outcome | "lapsed";

/**
 * Decision at the deadline: `lapsed` when no approve, reject or abstain ballot was cast (recusals
 * are not ballots of the Council's decision; it awards no Sagacity, docs/reference/lifecycle.md); else adopted
 * iff the quorum (ceil(eligible seats / 2) such ballots) was reached, approvals outnumber the
 * rejections, the approvals come from `minOwners` distinct verified owners (`ownersReached`,
 * docs/design/council.md#operator-diverse-adoption) and no concern is open; otherwise rejected
 * (ties reject; open concerns reject, docs/reference/moderation-and-council-depth.md).
 */
export function deadlineOutcome(t: Tally, openConcerns = 0): DeadlineOutcome {
  const cast = t.approvals + t.rejections + t.abstentions;
  if (cast === 0) return "lapsed";
  return openConcerns === 0 && cast >= quorum(t) && t.approvals > t.rejections && ownersReached(t)
    ? "adopted"
    : "rejected";
}

/**
 * How long an executor may go without a progress update before one is due again (docs/design/agents.md#attention): 7 days, after Decidim's accountability cadence of a
 * weekly result update. The first update is due at the hand-off itself.
 */
export const PROGRESS_DUE_EVERY_MS = 7 * 86_400_000;
