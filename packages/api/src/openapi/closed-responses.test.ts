import { buildOpenApi } from "./document.js";

/**
 * Every response object schema of the OpenAPI document is closed (docs/design/edge.md#the-openapi-document): the API suites'
 * contract check (docs/design/edge.md#contract-checks) can only catch a leaked field when the schema it validates against
 * says `additionalProperties: false`. A map (counts by key, an event's `data`) says so instead:
 * `additionalProperties` is a schema, or `propertyNames` names the keys.
 */

/** A JSON Schema (or any node of the document). */
type Schema = Record<string, unknown>;

/** What `responseSchemaFindings` reports. */
interface Findings {
  /** Pointers of object schemas under a response that are neither closed nor a map. */
  open: string[];
  /** `allOf`s with a closed branch that leaves out a field a sibling branch declares (it would refuse it). */
  conflicts: string[];
  /** Every schema pointer visited (`$ref` targets once, by their pointer). */
  visited: Set<string>;
}

const isSchema = (v: unknown): v is Schema => !!v && typeof v === "object" && !Array.isArray(v);

/** Resolves a local `$ref` (`#/components/schemas/X`) in `doc`. */
function resolve(doc: Schema, ref: string): Schema {
  let at: unknown = doc;
  for (const token of ref.slice(2).split("/")) at = (at as Schema)[token.replace(/~1/g, "/").replace(/~0/g, "~")];
  if (!isSchema(at)) throw new Error(`$ref ${ref} points at nothing`);
  return at;
}

/** An object schema: typed `object`, or saying anything about an object's fields. */
function isObjectSchema(s: Schema): boolean {
  return (
    [s.type].flat().includes("object") ||
    ["properties", "required", "additionalProperties", "patternProperties", "propertyNames"].some((k) => k in s)
  );
}

/** A map: `additionalProperties` is a schema (the values), or `propertyNames` constrains the keys. */
function isMap(s: Schema): boolean {
  return isSchema(s.additionalProperties) || isSchema(s.propertyNames);
}

/**
 * Walks every response body schema of `doc` (each operation, status and media type), following
 * `$ref` (into components, once each), `allOf`/`oneOf`/`anyOf`, `properties`, `patternProperties`,
 * `items`, `prefixItems` and a map's `additionalProperties`, and reports the object schemas that
 * are open and the `allOf`s whose closed branch would refuse a sibling's field.
 */
function responseSchemaFindings(doc: Schema): Findings {
  const found: Findings = { open: [], conflicts: [], visited: new Set() };
  const deref = (s: Schema): Schema => (typeof s.$ref === "string" ? resolve(doc, s.$ref) : s);
  const visit = (s: unknown, at: string): void => {
    if (!isSchema(s)) return;
    if (typeof s.$ref === "string") {
      if (!found.visited.has(s.$ref)) visit(resolve(doc, s.$ref), s.$ref);
      return;
    }
    if (found.visited.has(at)) return;
    found.visited.add(at);
    if (isObjectSchema(s) && s.additionalProperties !== false && !isMap(s)) found.open.push(at);
    if (Array.isArray(s.allOf)) {
      const branches = (s.allOf as Schema[]).map(deref);
      const declared = branches.flatMap((b) => Object.keys(isSchema(b.properties) ? b.properties : {}));
      for (const [i, b] of branches.entries())
        if (b.additionalProperties === false) {
          const own = new Set(Object.keys(isSchema(b.properties) ? b.properties : {}));
          const refused = [...new Set(declared.filter((k) => !own.has(k)))];
          if (refused.length) found.conflicts.push(`${at}/allOf/${i} refuses ${refused.join(", ")}`);
        }
    }
    for (const k of ["allOf", "oneOf", "anyOf", "prefixItems"] as const)
      if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((x, i) => visit(x, `${at}/${k}/${i}`));
    for (const k of ["properties", "patternProperties"] as const)
      if (isSchema(s[k])) for (const [name, x] of Object.entries(s[k])) visit(x, `${at}/${k}/${name}`);
    for (const k of ["items", "additionalProperties"] as const) visit(s[k], `${at}/${k}`);
  };
  const paths = doc.paths as Record<string, Record<string, { responses?: Record<string, Schema> }>>;
  for (const [path, item] of Object.entries(paths))
    for (const [method, op] of Object.entries(item))
      for (const [status, response] of Object.entries(op.responses ?? {}))
        for (const [media, content] of Object.entries((deref(response).content ?? {}) as Record<string, Schema>))
          visit(
            content.schema,
            `#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}/responses/${status}/content/${media.replace(/\//g, "~1")}/schema`,
          );
  return found;
}

// the document of any SKILL_VERSION: only info.version differs
const doc = buildOpenApi(1).document as Schema;

describe("response schemas of the OpenAPI document (docs/design/edge.md#the-openapi-document)", () => {
  it("closes every response object schema (additionalProperties: false) or states it as a map", () => {
    const { open, conflicts, visited } = responseSchemaFindings(doc);
    expect(open).toEqual([]);
    expect(conflicts).toEqual([]);
    // The walk reached the components the issue named, through $ref, items and allOf.
    for (const name of ["Agent", "Case", "Comment", "VoteResult", "Webhook", "Delivery", "Problem", "Transition"])
      expect(visited).toContain(`#/components/schemas/${name}`);
    expect(visited.size).toBeGreaterThan(500);
  });

  it("flags a deliberately open schema: a component, an inline one under a response, a nested one", () => {
    const opened = structuredClone(doc) as {
      components: { schemas: Record<string, Schema> };
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, Schema> }> }>>;
    };
    delete opened.components.schemas.Agent!.additionalProperties;
    delete (opened.components.schemas.Case!.properties as Record<string, Schema>).progress!.additionalProperties;
    opened.paths["/v1/skill-version"]!.get!.responses["200"]!.content["application/json"]!.schema = {
      type: "object",
      properties: { version: { type: "integer" } },
    };
    const { open, conflicts } = responseSchemaFindings(opened);
    expect(open.sort()).toEqual(
      [
        "#/components/schemas/Agent",
        "#/components/schemas/Case/properties/progress",
        "#/paths/~1v1~1skill-version/get/responses/200/content/application~1json/schema",
      ].sort(),
    );
    expect(conflicts).toEqual([]);
  });

  it("takes a map (additionalProperties a schema, or propertyNames) as closed, and `true` as open", () => {
    const at = "#/paths/~1x/get/responses/200/content/application~1json/schema";
    const one = (schema: Schema) =>
      responseSchemaFindings({
        paths: { "/x": { get: { responses: { "200": { content: { "application/json": { schema } } } } } } },
      });
    expect(one({ type: "object", additionalProperties: { type: "integer" } }).open).toEqual([]);
    expect(one({ type: "object", propertyNames: { enum: ["a", "b"] }, additionalProperties: false }).open).toEqual([]);
    expect(one({ type: "object", additionalProperties: true }).open).toEqual([at]);
    // inside a map's values and an array's items too
    expect(one({ type: "object", additionalProperties: { type: "object" } }).open).toEqual([
      `${at}/additionalProperties`,
    ]);
    expect(one({ type: "array", items: { type: ["object", "null"], properties: {} } }).open).toEqual([`${at}/items`]);
  });

  it("flags an allOf whose closed branch leaves out a field its sibling declares", () => {
    const doc2 = {
      components: {
        schemas: { Base: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false } },
      },
      paths: {
        "/x": {
          get: {
            responses: {
              "200": {
                content: {
                  "application/json": {
                    schema: {
                      allOf: [
                        { $ref: "#/components/schemas/Base" },
                        { type: "object", properties: { b: { type: "string" } }, additionalProperties: false },
                      ],
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    const { open, conflicts } = responseSchemaFindings(doc2);
    expect(open).toEqual([]);
    expect(conflicts).toEqual([
      "#/paths/~1x/get/responses/200/content/application~1json/schema/allOf/0 refuses b",
      "#/paths/~1x/get/responses/200/content/application~1json/schema/allOf/1 refuses a",
    ]);
  });
});
