import { describe, expect, it } from "@jest/globals";
import { buildOpenApi } from "./document.js";

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: unknown }> }>>;
  components: {
    responses?: Record<
      string,
      { content: Record<string, { schema: { allOf: { properties?: { code?: { enum: string[] } } }[] } }> }
    >;
  };
}

// the document of any SKILL_VERSION: only info.version differs
const built = buildOpenApi(1);
const doc = built.document as unknown as Doc;

/** The shared problem response an operation's `status` points at, or undefined. */
function problemAt(path: string, method: string, status: string) {
  const ref = doc.paths[path]?.[method]?.responses[status]?.$ref;
  return ref ? doc.components.responses?.[ref.split("/").pop()!] : undefined;
}

describe("the OpenAPI document's size: problem answers are shared (docs/reference/errors.md)", () => {
  it("is at most 300 KB, every error answer a reference to components.responses", () => {
    expect(built.json.length).toBeLessThanOrEqual(300 * 1024);
    const inline: string[] = [];
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        for (const [status, r] of Object.entries(op.responses))
          if (Number(status) >= 400 && !r.$ref?.startsWith("#/components/responses/"))
            inline.push(`${method} ${path} ${status}`);
    expect(inline).toEqual([]);
  });

  it("keeps each operation's own codes: a shared answer lists only the codes of that status the operation gives", () => {
    const codesOf = (path: string, method: string, status: string) =>
      problemAt(path, method, status)?.content["application/problem+json"]?.schema.allOf[1]?.properties?.code?.enum;
    // A page with a cursor refuses a foreign one; the feed's `after` is a cursor too.
    expect(codesOf("/v1/posts", "get", "400")).toEqual(expect.arrayContaining(["invalid_request", "invalid_cursor"]));
    expect(codesOf("/v1/events", "get", "400")).toEqual(expect.arrayContaining(["invalid_cursor"]));
    // A read with no cursor does not list it.
    expect(codesOf("/v1/posts/{id}", "get", "400")).not.toContain("invalid_cursor");
    expect(codesOf("/v1/posts/{id}", "get", "404")).toEqual(["not_found"]);
  });
});
