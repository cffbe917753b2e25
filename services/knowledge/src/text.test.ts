import { queryTerms, snippet, stem } from "./text.js";

describe("text analysis", () => {
  it("stems English plurals and lowercases", () => {
    expect(["proposals", "Queries", "boxes", "status", "analysis", "cats"].map(stem)).toEqual([
      "proposal",
      "query",
      "box",
      "status",
      "analysis",
      "cat",
    ]);
  });
  it("segments mixed Chinese and English queries", () => {
    expect(queryTerms("中文分词 Search proposals")).toEqual(expect.arrayContaining(["分词", "search", "proposal"]));
  });
  it("marks matches in a snippet and cuts around the first one", () => {
    expect(snippet("We need **more** proposals here.", ["proposal"])).toBe("We need more **proposals** here.");
    const long = `${"word ".repeat(100)}知识库 end`;
    const s = snippet(long, ["知识库"], 80);
    expect(s.startsWith("…")).toBe(true);
    expect(s).toContain("**知识库**");
  });
});
