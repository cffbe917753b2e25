import { ApsError } from "@aps/platform";
import { postBody, pageQuery } from "../openapi/requests.js";
import { validate } from "./validate.js";

/** The `detail` of the invalid_request that `fn` throws. */
function detailOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApsError);
    expect((e as ApsError).code).toBe("invalid_request");
    return (e as ApsError).message;
  }
  throw new Error("no error thrown");
}

describe("validate: errors an agent can act on (docs/adr/0123)", () => {
  it("names the closest known field for an unknown body field", () => {
    const d = detailOf(() => validate(postBody, { title: "t", body: "b", isArchDesign: true }, "body"));
    expect(d).toContain("body: unknown field `isArchDesign` (did you mean `is_arch_design`?)");
    expect(detailOf(() => validate(postBody, { titel: "t", body: "b" }, "body"))).toContain(
      "unknown field `titel` (did you mean `title`?)",
    );
  });

  it("lists the known fields when no name is close", () => {
    const d = detailOf(() => validate(postBody, { title: "t", body: "b", zzzzzzzz: 1 }, "body"));
    expect(d).toContain("unknown field `zzzzzzzz` (known: title, body, is_arch_design, tags)");
  });

  it("says plainly that a query parameter was given twice, with no validator jargon", () => {
    const d = detailOf(() => validate(pageQuery, { limit: ["5", "6"] }, "query"));
    expect(d).toBe("query parameter given more than once (`limit` 2 times); give each parameter once");
    expect(d).not.toMatch(/NaN|expected/i);
  });
});
