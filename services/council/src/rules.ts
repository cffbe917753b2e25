/**
 * The Council's close rules (docs/architecture.md §5), as pure functions of the tallies.
 * `seats` = councillors seated when the case opened.
 */
export type Outcome = "adopted" | "rejected";

/**
 * Decision right after a ballot: `adopted` once approvals are a strict majority of the seats;
 * `rejected` once approval can no longer reach that even if every remaining seat approves;
 * otherwise undefined (the case stays open).
 */
export function decisiveOutcome(seats: number, approvals: number, ballots: number): Outcome | undefined {
  if (approvals * 2 > seats) return "adopted";
  const remaining = Math.max(0, seats - ballots);
  if ((approvals + remaining) * 2 <= seats) return "rejected";
  return undefined;
}

/**
 * Decision at the deadline: adopted iff the quorum ballots ≥ ceil(seats/2) was reached and
 * approvals are a strict majority of the ballots cast; otherwise rejected (ties reject).
 */
export function deadlineOutcome(seats: number, approvals: number, ballots: number): Outcome {
  return ballots >= Math.ceil(seats / 2) && approvals * 2 > ballots ? "adopted" : "rejected";
}
