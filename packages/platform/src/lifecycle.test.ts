import { effectiveStatus, movesForward, POST_STATUSES, positionsSealedFor } from "./lifecycle.js";

/** The lifecycle rule (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/council.md#statuses-and-the-lifecycle-rule): statuses only move forward. */
describe("the lifecycle", () => {
  const path = ["open", "agenda", "review", "adopted", "implementing", "completed"];

  it("moves forward along the path and never back", () => {
    for (let i = 0; i < path.length; i++)
      for (let j = 0; j < path.length; j++)
        expect([path[i], path[j], movesForward(path[i]!, path[j]!)]).toEqual([path[i], path[j], j > i]);
  });

  it("treats adopted and rejected as one step: neither follows the other; rejected is final", () => {
    expect(movesForward("adopted", "rejected")).toBe(false);
    expect(movesForward("rejected", "adopted")).toBe(false);
    expect(movesForward("review", "rejected")).toBe(true);
    expect(movesForward("rejected", "implementing")).toBe(true); // the rank says so; the council never does it
  });

  it("keeps a discussion post out of the lifecycle (except a duplicate close), and ignores unknown statuses", () => {
    for (const s of POST_STATUSES) expect(movesForward("discussion", s)).toBe(s === "duplicate");
    expect(movesForward("open", "archived")).toBe(false);
    expect(movesForward("archived", "completed")).toBe(false);
  });

  it("shows the case's status when there is a case, unless the post is already further along", () => {
    expect(effectiveStatus("open", undefined)).toBe("open");
    expect(effectiveStatus("open", "")).toBe("open");
    expect(effectiveStatus("open", "review")).toBe("review"); // the projection lags: the council wins
    expect(effectiveStatus("agenda", "adopted")).toBe("adopted");
    expect(effectiveStatus("implementing", "adopted")).toBe("implementing"); // never backwards
    expect(effectiveStatus("discussion", undefined)).toBe("discussion");
  });

  it("closes open, agenda, review and discussion posts as duplicates, never a decided one (docs/design/council.md#duplicates)", () => {
    for (const s of ["open", "agenda", "review", "discussion"]) expect(movesForward(s, "duplicate")).toBe(true);
    for (const s of ["adopted", "rejected"]) expect(movesForward(s, "duplicate")).toBe(false);
    expect(effectiveStatus("agenda", "duplicate")).toBe("duplicate");
    expect(effectiveStatus("discussion", "duplicate")).toBe("duplicate");
  });

  it("a lapsed case closes like rejected: nothing moves it back or to another close (docs/design/council.md#lapse)", () => {
    for (const s of ["agenda", "review"]) expect(movesForward(s, "lapsed")).toBe(true);
    for (const s of ["open", "agenda", "review", "adopted", "rejected", "withdrawn", "duplicate"])
      expect(movesForward("lapsed", s)).toBe(false);
    for (const s of ["adopted", "rejected", "withdrawn", "duplicate"]) expect(movesForward(s, "lapsed")).toBe(false);
    expect(effectiveStatus("agenda", "lapsed")).toBe("lapsed");
  });
});

/** Sealed ballots (docs/reference/council.md "Sealed ballots"): who may read the others' positions of an open case. */
describe("positionsSealedFor", () => {
  const ballots = [
    { councillorId: "ext_a", vote: "approve" },
    { councillorId: "ext_r", vote: "recuse" },
  ];
  const open = (sealing: string) => ({ sealing, closedAt: "", ballots });
  it.each([
    // sealing, viewer, sealed from it?
    ["until_closed", undefined, true],
    ["until_closed", "ext_a", true], // its own ballot is shown by the renderer, not the others'
    ["until_vote", undefined, true],
    ["until_vote", "ext_x", true], // has not cast
    ["until_vote", "ext_r", true], // a recusal is no position
    ["until_vote", "ext_a", false], // cast a position: sees the others
    ["off", undefined, false],
    ["", undefined, false], // a case projected before sealing existed: public, as it was
    ["something new", "ext_a", true], // an unknown setting seals
  ] as const)("%s, viewer %s → sealed %s", (sealing, viewer, sealed) => {
    expect(positionsSealedFor(open(sealing), viewer)).toBe(sealed);
  });
  it("nothing is sealed once the case has closed", () => {
    for (const sealing of ["until_closed", "until_vote"])
      expect(positionsSealedFor({ sealing, closedAt: "2026-12-03T00:00:00.000Z", ballots }, undefined)).toBe(false);
  });
});
