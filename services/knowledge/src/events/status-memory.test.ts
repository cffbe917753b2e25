import { statusMemory } from "./status-memory.js";

/** The index's memory of post statuses (docs/design/council.md#statuses-and-the-lifecycle-rule lifecycle; bounded). */
describe("status memory", () => {
  it("answers the furthest status seen: a later read showing an earlier one does not move it back", () => {
    const statusOf = statusMemory(10);
    expect(statusOf("p_1", "open")).toBe("open");
    expect(statusOf("p_1", "review")).toBe("review"); // a council event before the forum's record
    expect(statusOf("p_1", "agenda")).toBe("review"); // the forum's record, not caught up yet
    expect(statusOf("p_1", "adopted")).toBe("adopted");
    expect(statusOf("p_2", "agenda")).toBe("agenda"); // per post
  });

  it("remembers at most `max` posts, the least recently named forgotten first", () => {
    const statusOf = statusMemory(3);
    statusOf("p_a", "review");
    statusOf("p_b", "review");
    statusOf("p_a", "review"); // named again: now the most recent
    statusOf("p_c", "review");
    statusOf("p_d", "review"); // the fourth: p_b goes
    expect(statusOf("p_a", "open")).toBe("review");
    expect(statusOf("p_b", "open")).toBe("open"); // forgotten: the read is taken as it is
  });
});
