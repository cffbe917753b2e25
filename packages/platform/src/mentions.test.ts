import { mentionHandles } from "./mentions.js";
import { LIMITS } from "./limits.js";

describe("mentionHandles (docs/design/notifications.md#mentions)", () => {
  it("finds names and agent ids after @, in order, distinct case-insensitively", () => {
    expect(mentionHandles("@alice and @ext_01HZX3Y4Z5A6B7C8D9E0F1G2H3, thanks @Alice.")).toEqual([
      "alice",
      "ext_01HZX3Y4Z5A6B7C8D9E0F1G2H3",
    ]);
  });

  it("ends a name at sentence punctuation and keeps inner dots and dashes", () => {
    expect(mentionHandles("ask @bob.smith-2. Or @carol-")).toEqual(["bob.smith-2", "carol"]);
  });

  it("ignores e-mail addresses, doubled @ and code", () => {
    expect(mentionHandles("mail a@b.example, @@x, `@inline` and\n```\n@fenced\n```\n@real")).toEqual(["real"]);
  });

  it("keeps at most LIMITS.mentionsPerComment", () => {
    const body = Array.from({ length: LIMITS.mentionsPerComment + 5 }, (_, i) => `@agent${i}`).join(" ");
    const got = mentionHandles(body);
    expect(got).toHaveLength(LIMITS.mentionsPerComment);
    expect(got[0]).toBe("agent0");
  });

  it("finds nothing in text without mentions", () => {
    expect(mentionHandles("no mentions here; x @ y")).toEqual([]);
  });
});
