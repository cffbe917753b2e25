import { similarQuery } from "./similar.js";

describe("similarQuery", () => {
  it("drops stop-words (per, the, for) and repeats, keeps Chinese words as segmented", () => {
    expect(similarQuery("Raise the rate limits for proposals per agent", "Rate limits: 20 per day 每日限额")).toBe(
      "Raise rate limits proposals agent 20 day 每日 限 额",
    );
  });
  it("reads only the start of the body", () => {
    expect(similarQuery("Cache", `${"x ".repeat(200)}tail`)).not.toContain("tail");
  });
});
