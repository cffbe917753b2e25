import { POST_STATUSES } from "./lifecycle.js";
import { isReservedTag, POST_KINDS, RESERVED_TAGS, reservedTagMessage } from "./tags.js";

describe("reserved tag words (docs/design/edge.md#validation)", () => {
  it("reserves every status, every post kind, the search-hit kinds and docs", () => {
    for (const s of POST_STATUSES) expect(isReservedTag(s)).toBe(true);
    for (const k of POST_KINDS) expect(isReservedTag(k)).toBe(true);
    for (const w of ["doc", "post", "comment", "docs"]) expect(isReservedTag(w)).toBe(true);
    expect(RESERVED_TAGS.size).toBe(POST_STATUSES.length + POST_KINDS.length + 4);
  });

  it("leaves ordinary tags alone, including words that merely contain a reserved one", () => {
    for (const t of ["storage", "adoption", "reopened", "docs-site", "post-mortem", "architecture", "comments"])
      expect(isReservedTag(t)).toBe(false);
  });

  it("names the word in its message", () => {
    expect(reservedTagMessage("adopted")).toBe(
      '"adopted" is reserved (a status or kind name, or docs) and cannot be a tag',
    );
  });
});
