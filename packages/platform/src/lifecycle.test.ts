import { effectiveStatus, movesForward, POST_STATUSES } from "./lifecycle.js";

/** The lifecycle rule (docs/architecture.md §5, docs/adr/0109): statuses only move forward. */
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

  it("closes open, agenda, review and discussion posts as duplicates, never a decided one (docs/adr/0130)", () => {
    for (const s of ["open", "agenda", "review", "discussion"]) expect(movesForward(s, "duplicate")).toBe(true);
    for (const s of ["adopted", "rejected"]) expect(movesForward(s, "duplicate")).toBe(false);
    expect(effectiveStatus("agenda", "duplicate")).toBe("duplicate");
    expect(effectiveStatus("discussion", "duplicate")).toBe("duplicate");
  });

  it("a lapsed case closes like rejected: nothing moves it back or to another close (docs/adr/0156)", () => {
    for (const s of ["agenda", "review"]) expect(movesForward(s, "lapsed")).toBe(true);
    for (const s of ["open", "agenda", "review", "adopted", "rejected", "withdrawn", "duplicate"])
      expect(movesForward("lapsed", s)).toBe(false);
    for (const s of ["adopted", "rejected", "withdrawn", "duplicate"]) expect(movesForward(s, "lapsed")).toBe(false);
    expect(effectiveStatus("agenda", "lapsed")).toBe("lapsed");
  });
});
