import { deadlineOutcome, decisiveOutcome, eligibleSeats, ownersReached, type Tally } from "./rules.js";

/** A tally of approve/reject ballots only, as before positions (docs/design/council.md#statuses-and-the-lifecycle-rule). */
const t = (seats: number, approvals: number, ballots: number, more: Partial<Tally> = {}): Tally => ({
  seats,
  approvals,
  rejections: ballots - approvals,
  abstentions: 0,
  recusals: 0,
  ...more,
});

/**
 * Brute force of the decisive rule: an outcome is decided once every way the remaining eligible
 * seats could still act (approve, reject, abstain or not at all) ends in it at the deadline.
 */
function bruteDecisive(x: Tally): string | undefined {
  const remaining = eligibleSeats(x) - x.approvals - x.rejections - x.abstentions;
  const ends = new Set<string>();
  for (let a = 0; a <= remaining; a++)
    for (let r = 0; a + r <= remaining; r++)
      for (let s = 0; a + r + s <= remaining; s++)
        // each new approval comes from a new verified owner, an owner already counted, or none
        for (let o = 0; o <= a; o++)
          ends.add(
            deadlineOutcome({
              ...x,
              approvals: x.approvals + a,
              rejections: x.rejections + r,
              abstentions: x.abstentions + s,
              approvingOwners: (x.approvingOwners ?? 0) + o,
            }),
          );
  if (eligibleSeats(x) === 0) return undefined;
  return ends.size === 1 && !ends.has("lapsed") ? [...ends][0] : undefined;
}

describe("Council close rules (docs/design/council.md#statuses-and-the-lifecycle-rule)", () => {
  it("adopts at once exactly when approvals are a strict majority of the seats", () => {
    expect(decisiveOutcome(t(3, 2, 2))).toBe("adopted");
    expect(decisiveOutcome(t(4, 2, 2))).toBeUndefined();
    expect(decisiveOutcome(t(4, 3, 3))).toBe("adopted");
    expect(decisiveOutcome(t(1, 1, 1))).toBe("adopted");
  });

  it("rejects at once exactly when approval can no longer reach a strict majority (ties reject)", () => {
    expect(decisiveOutcome(t(4, 2, 4))).toBe("rejected");
    expect(decisiveOutcome(t(3, 0, 2))).toBe("rejected");
    expect(decisiveOutcome(t(5, 1, 3))).toBeUndefined();
    expect(decisiveOutcome(t(5, 0, 3))).toBe("rejected");
  });

  it("agrees with a brute-force reading of the rule for every small tally of every position", () => {
    for (let seats = 0; seats <= 7; seats++)
      for (let recusals = 0; recusals <= seats; recusals++)
        for (let approvals = 0; approvals + recusals <= seats; approvals++)
          for (let rejections = 0; approvals + rejections + recusals <= seats; rejections++)
            for (let abstentions = 0; approvals + rejections + abstentions + recusals <= seats; abstentions++) {
              const x = { seats, approvals, rejections, abstentions, recusals };
              expect([x, decisiveOutcome(x)]).toEqual([x, bruteDecisive(x)]);
            }
  });

  it("at the deadline adopts only with the quorum ceil(seats/2) and a strict majority of the ballots cast", () => {
    expect(deadlineOutcome(t(5, 2, 3))).toBe("adopted"); // quorum 3, 2 > 1
    expect(deadlineOutcome(t(5, 2, 2))).toBe("rejected"); // below quorum
    expect(deadlineOutcome(t(4, 1, 2))).toBe("rejected"); // quorum met, tie
    expect(deadlineOutcome(t(4, 2, 2))).toBe("adopted");
    expect(deadlineOutcome(t(3, 1, 1))).toBe("rejected"); // quorum is 2
  });

  it("an abstention counts toward the quorum, not the majority", () => {
    // 5 seats: 2 approve + 1 abstain meet the quorum of 3 and adopt; without the abstention, no quorum
    expect(deadlineOutcome(t(5, 2, 2, { abstentions: 1 }))).toBe("adopted");
    expect(deadlineOutcome(t(5, 2, 2))).toBe("rejected");
    // 3 seats: 1 approve, 1 reject, 1 abstain: quorum met, tie of the deciding positions: rejected
    expect(deadlineOutcome(t(3, 1, 2, { abstentions: 1 }))).toBe("rejected");
    // abstentions do not count against: 1 approve and 2 abstain of 3 seats is decided, adopted
    expect(decisiveOutcome(t(3, 1, 1, { abstentions: 2 }))).toBe("adopted");
    // but an abstention is not an approval: 1 approve + 1 abstain of 3 waits for the third seat
    expect(decisiveOutcome(t(3, 1, 1, { abstentions: 1 }))).toBeUndefined();
  });

  it("quorum and majority are computed over the eligible seats: recused seats leave the electorate", () => {
    // 3 seats, the author recused: 2 eligible, one approval is no majority of them, two are
    expect(eligibleSeats(t(3, 0, 0, { recusals: 1 }))).toBe(2);
    expect(decisiveOutcome(t(3, 1, 1, { recusals: 1 }))).toBeUndefined();
    expect(decisiveOutcome(t(3, 2, 2, { recusals: 1 }))).toBe("adopted");
    // quorum of 4 seats with 2 recused is 1
    expect(deadlineOutcome(t(4, 1, 1, { recusals: 2 }))).toBe("adopted");
    // everyone recused: nothing is decided by ballots, and the deadline lapses the case
    expect(decisiveOutcome(t(2, 0, 0, { recusals: 2 }))).toBeUndefined();
    expect(deadlineOutcome(t(2, 0, 0, { recusals: 2 }))).toBe("lapsed");
  });

  it("at the deadline with no ballot the case lapses: no Council outcome (docs/design/council.md#lapse)", () => {
    // Was "rejected", which paid every −1 voter of a case no councillor touched.
    expect(deadlineOutcome(t(0, 0, 0))).toBe("lapsed"); // nobody seated
    expect(deadlineOutcome(t(5, 0, 0))).toBe("lapsed"); // a Council that did not act
    expect(deadlineOutcome(t(4, 0, 0), 1)).toBe("lapsed"); // a concern is not a ballot
    expect(deadlineOutcome(t(5, 0, 1))).toBe("rejected"); // one ballot: the quorum rule decides
  });

  it("with an open concern, a decisive approval waits and the deadline rejects (docs/design/council.md#duplicates)", () => {
    expect(decisiveOutcome(t(3, 2, 2), 1)).toBeUndefined(); // would adopt; waits
    expect(decisiveOutcome(t(3, 2, 2), 0)).toBe("adopted"); // once resolved
    expect(decisiveOutcome(t(3, 0, 2), 1)).toBe("rejected"); // rejection is not blocked
    expect(deadlineOutcome(t(4, 2, 2), 1)).toBe("rejected");
    expect(deadlineOutcome(t(4, 2, 2), 0)).toBe("adopted");
  });

  it("with COUNCIL_MIN_OWNERS k, adoption needs approvals from k distinct verified owners (docs/design/council.md#operator-diverse-adoption)", () => {
    const k2 = (approvals: number, ballots: number, approvingOwners: number, seats = 4) =>
      t(seats, approvals, ballots, { approvingOwners, minOwners: 2 });
    // three approvals of 4 seats from one verified domain: a majority, not decisive; the fourth seat may bring a second owner
    expect(decisiveOutcome(k2(3, 3, 1))).toBeUndefined();
    expect(ownersReached(k2(3, 3, 1))).toBe(false);
    // an approval from a second domain adopts
    expect(decisiveOutcome(k2(4, 4, 2))).toBe("adopted");
    // unverified approvers are no owner: three approvals, none verified, cannot reach 2 owners with one seat left
    expect(decisiveOutcome(k2(3, 3, 0))).toBe("rejected");
    expect(decisiveOutcome(k2(2, 2, 0))).toBeUndefined(); // two seats left may still bring two owners
    // every seat cast, one owner short: no later ballot can adopt, so the case is decided rejected
    expect(decisiveOutcome(k2(4, 4, 1))).toBe("rejected");
    // at the deadline an approval majority short of owners rejects; with them it adopts
    expect(deadlineOutcome(k2(3, 3, 1))).toBe("rejected");
    expect(deadlineOutcome(k2(3, 3, 2))).toBe("adopted");
    // a rejection majority is decided as before
    expect(decisiveOutcome(k2(0, 3, 0))).toBe("rejected");
    // k = 0 (or a case opened before the rule: absent) is today's rule, whatever the owners
    expect(decisiveOutcome(t(4, 3, 3, { approvingOwners: 1, minOwners: 0 }))).toBe("adopted");
    expect(decisiveOutcome(t(4, 3, 3, { approvingOwners: 0 }))).toBe("adopted");
    expect(deadlineOutcome(t(4, 2, 2, { approvingOwners: 0, minOwners: 0 }))).toBe("adopted");
    // a k above the seats can never be met: the first ballot decides a rejection (a ballot, not a lapse)
    expect(decisiveOutcome(t(2, 0, 0, { minOwners: 3 }))).toBeUndefined();
    expect(decisiveOutcome(t(2, 1, 1, { approvingOwners: 1, minOwners: 3 }))).toBe("rejected");
  });

  it("agrees with the brute-force reading for every small tally, approving-owner count and k", () => {
    for (let seats = 1; seats <= 5; seats++)
      for (let recusals = 0; recusals <= seats; recusals++)
        for (let approvals = 0; approvals + recusals <= seats; approvals++)
          for (let rejections = 0; approvals + rejections + recusals <= seats; rejections++)
            for (let abstentions = 0; approvals + rejections + abstentions + recusals <= seats; abstentions++)
              for (let approvingOwners = 0; approvingOwners <= approvals; approvingOwners++)
                for (let minOwners = 0; minOwners <= 4; minOwners++) {
                  const x = { seats, approvals, rejections, abstentions, recusals, approvingOwners, minOwners };
                  expect([x, decisiveOutcome(x)]).toEqual([x, bruteDecisive(x)]);
                }
  });
});
