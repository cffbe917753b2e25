import { z } from "zod";
import { argsOf } from "./args.js";
import { apiInputs, InputSchemaError } from "./inputs.js";

/**
 * Tool arguments from the API's request schemas (docs/design/agents.md#mcp-arguments): a body property
 * or a parameter of the operation, its `$ref`s followed, with what a value must be kept and the
 * API's annotations left in its document. The real document is checked in
 * test/ops/mcp-inputs.test.ts.
 */

/** A document of two operations: a body with a `$ref`'d schema, and parameters (one by `$ref`). */
function document() {
  return {
    paths: {
      "/v1/things": {
        post: {
          parameters: [{ $ref: "#/components/parameters/key" }],
          requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/NewThing" } } } },
        },
        get: {
          parameters: [
            {
              name: "limit",
              in: "query",
              required: false,
              schema: { type: "integer", minimum: 1, maximum: 9, default: 5 },
            },
            { name: "id", in: "path", required: true, schema: { type: "string", example: "t_1" } },
          ],
        },
      },
    },
    components: {
      parameters: {
        key: { name: "Idempotency-Key", in: "header", schema: { type: "string", pattern: "^[a-z]{1,9}$" } },
      },
      schemas: {
        NewThing: {
          type: "object",
          properties: {
            title: { type: "string", minLength: 1, maxLength: 20, description: "the API's own words", example: "x" },
            tags: {
              type: "array",
              maxItems: 3,
              items: { type: "string", pattern: "^[a-z]+$", not: { enum: ["open"] } },
              description: "long",
            },
            kind: { $ref: "#/components/schemas/Kind" },
          },
          required: ["title"],
        },
        Kind: { type: "string", enum: ["a", "b"] },
      },
    },
  };
}

/** The JSON Schema `tools/list` shows for `shape`. */
const listed = (shape: Record<string, z.ZodType>) => z.toJSONSchema(argsOf(shape), { io: "input" });

describe("apiInputs", () => {
  it("takes a body property's schema, keeping what a value must be and leaving the annotations", () => {
    const input = apiInputs(document());
    const json = listed({
      title: input.of(["post", "/v1/things"], "title"),
      tags: input.of(["post", "/v1/things"], "tags", { describe: "up to 3" }),
      kind: input.of(["post", "/v1/things"], "kind"),
    });
    expect(json.properties).toEqual({
      title: { type: "string", minLength: 1, maxLength: 20 },
      tags: { type: "array", maxItems: 3, items: { type: "string", pattern: "^[a-z]+$" }, description: "up to 3" },
      kind: { type: "string", enum: ["a", "b"] },
    });
    expect(json.required).toEqual(["title"]);
  });

  it("takes query, path and header parameters (a $ref'd one too) and their required flag", () => {
    const input = apiInputs(document());
    const json = listed({
      limit: input.of(["get", "/v1/things"], "limit"),
      id: input.of(["get", "/v1/things"], "id"),
      key: input.of(["post", "/v1/things"], "Idempotency-Key"),
    });
    expect(json.properties).toEqual({
      limit: { type: "integer", minimum: 1, maximum: 9 },
      id: { type: "string" },
      key: { type: "string", pattern: "^[a-z]{1,9}$" },
    });
    expect(json.required).toEqual(["id"]);
  });

  it("makes an argument optional or required where the tool says so", () => {
    const input = apiInputs(document());
    const json = listed({
      title: input.of(["post", "/v1/things"], "title", { optional: true }),
      kind: input.of(["post", "/v1/things"], "kind", { required: true }),
    });
    expect(json.required).toEqual(["kind"]);
  });

  it("names the operation and the field the document lacks", () => {
    const input = apiInputs(document());
    expect(() => input.of(["post", "/v1/things"], "colour")).toThrow(InputSchemaError);
    expect(() => input.of(["post", "/v1/things"], "colour")).toThrow(
      "POST /v1/things has no body property or parameter colour",
    );
    expect(() => input.of(["delete", "/v1/things"], "id")).toThrow(
      "the API document has no operation DELETE /v1/things",
    );
  });

  it("builds a tool's input schema once per document, and again for another document", () => {
    const doc = document();
    let builds = 0;
    const build = () => (builds++, argsOf({ title: apiInputs(doc).of(["post", "/v1/things"], "title") }));
    const first = apiInputs(doc).schema("make_thing", build);
    expect(apiInputs(doc).schema("make_thing", build)).toBe(first);
    expect(builds).toBe(1);
    expect(apiInputs(document()).schema("make_thing", build)).not.toBe(first);
    expect(builds).toBe(2);
  });

  it("without a document, an argument is any optional value with the tool's description", () => {
    const json = listed({ title: apiInputs(undefined).of(["post", "/v1/things"], "title", { describe: "a title" }) });
    expect(json.properties).toEqual({ title: { description: "a title" } });
    expect(json.required).toBeUndefined();
  });
});
