/**
 * The Council's close rules (docs/architecture.md §5), as pure functions of the tallies.
 * `seats` = councillors seated when the case opened.
 */
export type Outcome = "adopted" | "rejected";

/**
 * Decision right after a ballot: `adopted` once approvals are a strict majority of the seats;
 * `rejected` once approval can no longer reach that even if every remaining seat approves;
 * otherwise undefined (the case stays open). While `openConcerns` > 0 a decisive approval waits
 * (undefined) — a blocking concern, after the Rust RFC process (docs/adr/0130); rejection does not.
 */
export function decisiveOutcome(
  seats: number,
  approvals: number,
  ballots: number,
  openConcerns = 0,
): Outcome | undefined {
  if (approvals * 2 > seats) return openConcerns > 0 ? undefined : "adopted";
  const remaining = Math.max(0, seats - ballots);
  if ((approvals + remaining) * 2 <= seats) return "rejected";
  return undefined;
}

/**
 * How a case closes at its deadline: a Council outcome, or `lapsed` — the deadline passed with no
 * Council ballot, so the Council decided nothing (issue 30 rule 3, docs/adr/0156).
 */
export type DeadlineOutcome = Outcome | "lapsed";

/**
 * Decision at the deadline: `lapsed` when no ballot was cast (not a Council outcome: it awards no
 * Sagacity, issue 30 rule 3, docs/adr/0156); else adopted iff the quorum ballots ≥ ceil(seats/2)
 * was reached, approvals are a strict majority of the ballots cast and no concern is open;
 * otherwise rejected (ties reject; open concerns reject, docs/adr/0130).
 */
export function deadlineOutcome(seats: number, approvals: number, ballots: number, openConcerns = 0): DeadlineOutcome {
  if (ballots === 0) return "lapsed";
  return openConcerns === 0 && ballots >= Math.ceil(seats / 2) && approvals * 2 > ballots ? "adopted" : "rejected";
}

/**
 * How long an executor may go without a progress update before one is due again (issue 32
 * "Attention and check-ins", docs/adr/0188): 7 days, after Decidim's accountability cadence of a
 * weekly result update. The first update is due at the hand-off itself.
 */
export const PROGRESS_DUE_EVERY_MS = 7 * 86_400_000;
