import { deadlineOutcome, decisiveOutcome } from "./rules.js";

/** Brute force of docs/architecture.md §5 for the decisive rule: can any completion of the ballots still adopt? */
function canStillAdopt(seats: number, approvals: number, ballots: number): boolean {
  return (approvals + Math.max(0, seats - ballots)) * 2 > seats;
}

describe("Council close rules (docs/architecture.md §5)", () => {
  it("adopts at once exactly when approvals are a strict majority of the seats", () => {
    expect(decisiveOutcome(3, 2, 2)).toBe("adopted");
    expect(decisiveOutcome(4, 2, 2)).toBeUndefined();
    expect(decisiveOutcome(4, 3, 3)).toBe("adopted");
    expect(decisiveOutcome(1, 1, 1)).toBe("adopted");
  });

  it("rejects at once exactly when approval can no longer reach a strict majority (ties reject)", () => {
    expect(decisiveOutcome(4, 2, 4)).toBe("rejected");
    expect(decisiveOutcome(3, 0, 2)).toBe("rejected");
    expect(decisiveOutcome(5, 1, 3)).toBeUndefined();
    expect(decisiveOutcome(5, 0, 3)).toBe("rejected");
  });

  it("agrees with a brute-force reading of the rule for every small tally", () => {
    for (let seats = 1; seats <= 9; seats++) {
      for (let ballots = 0; ballots <= seats; ballots++) {
        for (let approvals = 0; approvals <= ballots; approvals++) {
          const got = decisiveOutcome(seats, approvals, ballots);
          const want =
            approvals * 2 > seats ? "adopted" : canStillAdopt(seats, approvals, ballots) ? undefined : "rejected";
          expect([seats, approvals, ballots, got]).toEqual([seats, approvals, ballots, want]);
        }
      }
    }
  });

  it("at the deadline adopts only with the quorum ceil(seats/2) and a strict majority of the ballots cast", () => {
    expect(deadlineOutcome(5, 2, 3)).toBe("adopted"); // quorum 3, 2 > 1.5
    expect(deadlineOutcome(5, 2, 2)).toBe("rejected"); // below quorum
    expect(deadlineOutcome(4, 1, 2)).toBe("rejected"); // quorum met, tie
    expect(deadlineOutcome(4, 2, 2)).toBe("adopted");
    expect(deadlineOutcome(3, 1, 1)).toBe("rejected"); // quorum is 2
  });

  it("at the deadline with no ballot the case lapses: no Council outcome (issue 30 rule 3, docs/adr/0156)", () => {
    // Was "rejected", which paid every −1 voter of a case no councillor touched.
    expect(deadlineOutcome(0, 0, 0)).toBe("lapsed"); // nobody seated
    expect(deadlineOutcome(5, 0, 0)).toBe("lapsed"); // a Council that did not act
    expect(deadlineOutcome(4, 0, 0, 1)).toBe("lapsed"); // a concern is not a ballot
    expect(deadlineOutcome(5, 0, 1)).toBe("rejected"); // one ballot: the quorum rule decides
  });

  it("with an open concern, a decisive approval waits and the deadline rejects (docs/adr/0130)", () => {
    expect(decisiveOutcome(3, 2, 2, 1)).toBeUndefined(); // would adopt; waits
    expect(decisiveOutcome(3, 2, 2, 0)).toBe("adopted"); // once resolved
    expect(decisiveOutcome(3, 0, 2, 1)).toBe("rejected"); // rejection is not blocked
    expect(deadlineOutcome(4, 2, 2, 1)).toBe("rejected");
    expect(deadlineOutcome(4, 2, 2, 0)).toBe("adopted");
  });
});
