import { EVENT_TYPES } from "@aps/platform";
import { milestoneCrossed, PUBLIC_EVENT_RULES, PUBLIC_EVENT_TYPES, VOTE_MILESTONES } from "./public-events.js";

const vote = (vote: number, previousVote: number, votesFor: number, votesAgainst: number) => ({
  eventId: "e",
  occurredAt: "2026-01-01T00:00:00.000Z",
  postId: "p",
  voterId: "v",
  vote,
  previousVote,
  votesFor,
  votesAgainst,
  postAuthorId: "",
});

describe("public events (docs/design/notifications.md#ingest)", () => {
  it("a vote crosses a milestone only when the score goes from below to at least it", () => {
    expect(milestoneCrossed(vote(1, 0, 5, 0))).toBe(5); // 4 → 5
    expect(milestoneCrossed(vote(1, 0, 6, 0))).toBeUndefined(); // 5 → 6
    expect(milestoneCrossed(vote(1, -1, 5, 0))).toBe(5); // 3 → 5 (a flip moves by 2)
    expect(milestoneCrossed(vote(-1, 0, 5, 1))).toBeUndefined(); // 5 → 4
    expect(milestoneCrossed(vote(1, 0, 10, 0))).toBe(10);
    expect(VOTE_MILESTONES[0]).toBe(5);
  });

  it("every public type comes from some rule, and every rule's key is a catalogue type", () => {
    const produced = new Set<string>();
    for (const [type, rule] of Object.entries(PUBLIC_EVENT_RULES)) {
      expect(Object.keys(EVENT_TYPES)).toContain(type);
      // an all-default message of the type: the rule runs and names only public types
      const codec = EVENT_TYPES[type as keyof typeof EVENT_TYPES] as unknown as { fromPartial(x: object): object };
      const m = {
        ...codec.fromPartial({}),
        eventId: "e",
        occurredAt: "2026-01-01T00:00:00.000Z",
        votesFor: 5,
        vote: 1,
        mentionedIds: ["ext_mentioned"], // a comment that @-mentions someone (docs/design/notifications.md#mentions)
      };
      for (const e of (rule as (x: object) => { type: string }[])(m)) produced.add(e.type);
    }
    expect([...produced].sort()).toEqual([...PUBLIC_EVENT_TYPES].sort());
  });
});
