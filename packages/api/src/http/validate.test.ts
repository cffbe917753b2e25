import { ApsError } from "@aps/platform";
import { archDesignOf, commentBody, postBody, pageQuery } from "../openapi/requests.js";
import { webhookBody } from "../events/schemas.js";
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

describe("validate: errors an agent can act on (docs/design/agents.md#discovery)", () => {
  it("names the closest known field for an unknown body field", () => {
    expect(detailOf(() => validate(postBody, { titel: "t", body: "b" }, "body"))).toContain(
      "unknown field `titel` (did you mean `title`?)",
    );
  });

  it("lists the known fields when no name is close", () => {
    const d = detailOf(() => validate(postBody, { title: "t", body: "b", zzzzzzzz: 1 }, "body"));
    expect(d).toContain("unknown field `zzzzzzzz` (known: title, body, is_arch_design, isArchDesign, tags, template)");
  });

  it("says plainly that a query parameter was given twice, with no validator jargon", () => {
    const d = detailOf(() => validate(pageQuery, { limit: ["5", "6"] }, "query"));
    expect(d).toBe("query parameter given more than once (`limit` 2 times); give each parameter once");
    expect(d).not.toMatch(/NaN|expected/i);
  });
});

describe("validate: field-level messages in plain words (docs/design/edge.md#index-405-and-404)", () => {
  it("says a missing field is required and a wrong type what it must be", () => {
    expect(detailOf(() => validate(postBody, { body: "b", is_arch_design: true }, "body"))).toBe("`title` is required");
    expect(detailOf(() => validate(postBody, { title: 5, body: "b", is_arch_design: true }, "body"))).toBe(
      "`title` must be a string, not a number",
    );
    expect(detailOf(() => validate(postBody, { title: "", body: "b", is_arch_design: true }, "body"))).toBe(
      "`title` must be at least 1 character(s) and not blank",
    );
  });

  it("names a query parameter and its bound", () => {
    expect(detailOf(() => validate(pageQuery, { limit: "1000" }, "query"))).toBe(
      "query parameter `limit` must be at most 100",
    );
    expect(detailOf(() => validate(pageQuery, { limit: "many" }, "query"))).toBe(
      "query parameter `limit` must be a number, not `many`",
    );
  });

  it("names an array element and the known values of an enum", () => {
    const d = detailOf(() =>
      validate(webhookBody, { url: "https://a.example", events: ["post.created", "bogus.type"] }, "body"),
    );
    expect(d).toMatch(/^`events\[1\]`: unknown event type `bogus\.type`; known: .*post\.created.*, or "\*" for all$/);
  });

  it("accepts isArchDesign for is_arch_design, refuses both disagreeing, and names the camelCase field", () => {
    expect(archDesignOf(validate(postBody, { title: "t", body: "b", isArchDesign: false }, "body"))).toBe(false);
    expect(detailOf(() => validate(postBody, { title: "t", body: "b" }, "body"))).toBe(
      "`is_arch_design` is required (or its alias `isArchDesign`)",
    );
    expect(
      detailOf(() => validate(postBody, { title: "t", body: "b", is_arch_design: true, isArchDesign: false }, "body")),
    ).toContain("`isArchDesign` differs from `is_arch_design`");
    expect(detailOf(() => validate(commentBody, { body: "b", parent_id: "c_1" }, "body"))).toBe(
      "unknown field `parent_id`: request fields are camelCase, send `parentId`",
    );
  });
});
