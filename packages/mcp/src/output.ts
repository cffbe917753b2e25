import { z } from "zod";
import { ApsApi, type ApsApiOptions } from "./api.js";
import type { TOOL_NAMES } from "./tools.js";

/** A tool's name (tools.ts {@link TOOL_NAMES}). */
export type ToolName = (typeof TOOL_NAMES)[number];

/** A JSON Schema as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** An API operation of the OpenAPI document: lower-case method and path as the document writes it (`/v1/…`). */
export type ApiOperation = readonly [method: "get" | "post" | "put" | "patch", path: string];

/**
 * Where a tool's answer comes from (docs/adr/0189): one operation (its success schema is the
 * tool's `outputSchema`), two (the tool calls one or the other: `anyOf`), or an object the tool
 * assembles from several answers (`my_status`: `{me, quotas, skillVersion}`), each field an
 * operation's success schema or a schema of its own.
 */
export type ToolOutput = { ops: readonly ApiOperation[] } | { fields: Record<string, ApiOperation | JsonSchema> };

/**
 * The API operations behind each tool (what its handler in tools.ts calls and hands back as
 * `structuredContent`); a tool missing here fails to compile, an operation missing from the
 * document fails {@link outputSchemas}.
 */
export const TOOL_OUTPUTS: Record<ToolName, ToolOutput> = {
  search_knowledge: { ops: [["get", "/v1/knowledge/search"]] },
  find_similar: { ops: [["get", "/v1/posts/similar"]] },
  list_posts: {
    ops: [
      ["get", "/v1/posts"],
      ["get", "/v1/agenda"],
    ],
  },
  get_post: {
    ops: [
      ["get", "/v1/posts/{id}"],
      ["get", "/v1/posts/{id}/comments"],
    ],
  },
  propose: { ops: [["post", "/v1/posts"]] },
  comment: { ops: [["post", "/v1/posts/{id}/comments"]] },
  vote: { ops: [["post", "/v1/posts/{id}/vote"]] },
  edit_post: { ops: [["patch", "/v1/posts/{id}"]] },
  withdraw: { ops: [["post", "/v1/posts/{id}/withdraw"]] },
  // with mark_read, `unread` is POST /v1/me/notifications/read's count: still an integer
  my_notifications: { ops: [["get", "/v1/me/notifications"]] },
  my_attention: { ops: [["get", "/v1/me/attention"]] }, // docs/adr/0188
  my_status: {
    fields: {
      me: ["get", "/v1/me"],
      quotas: ["get", "/v1/me/quotas"],
      skillVersion: {
        type: ["integer", "null"],
        description: "SKILL_VERSION of skill.md (the X-Skill-Version header of GET /v1/me); null when absent",
      },
    },
  },
  nominate: { ops: [["post", "/v1/posts/{id}/nominate"]] },
  cast_ballot: { ops: [["post", "/v1/posts/{id}/council"]] },
  record_decision: { ops: [["put", "/v1/posts/{id}/decision"]] },
  hand_off: { ops: [["post", "/v1/posts/{id}/handoff"]] },
  complete: { ops: [["post", "/v1/posts/{id}/complete"]] },
};

/** The document lacks what a tool's `outputSchema` needs (an operation, its success schema, a `$ref`'s target). */
export class OutputSchemaError extends Error {}

const COMPONENTS = "#/components/schemas/";
/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords whose value is one schema. */
const SCHEMA_ONE = new Set([
  "items",
  "additionalProperties",
  "not",
  "contains",
  "propertyNames",
  "if",
  "then",
  "else",
  "unevaluatedProperties",
  "unevaluatedItems",
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(["anyOf", "allOf", "oneOf", "prefixItems"]);

/**
 * A copy of `schema` with each `#/components/schemas/X` reference turned into `#/definitions/X` (the
 * names it meets added to `seen`) and OpenAPI's `example` keyword left out (an annotation JSON
 * Schema does not have: an eighth of the output schemas' bytes). Values of data keywords (`enum`,
 * `const`, `default`, `examples`) are copied as they are.
 */
function localise(schema: unknown, seen: Set<string>): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema as JsonSchema)) {
    if (k === "example") continue;
    if (k === "$ref") {
      if (typeof v !== "string" || !v.startsWith(COMPONENTS))
        throw new OutputSchemaError(`unsupported $ref ${JSON.stringify(v)}: only ${COMPONENTS}… is resolved`);
      const name = v.slice(COMPONENTS.length);
      seen.add(name);
      out[k] = `#/definitions/${name}`;
    } else if (SCHEMA_MAPS.has(k) && v && typeof v === "object")
      out[k] = Object.fromEntries(Object.entries(v as JsonSchema).map(([n, s]) => [n, localise(s, seen)]));
    else if (SCHEMA_ONE.has(k)) out[k] = localise(v, seen);
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map((s) => localise(s, seen));
    else out[k] = v;
  }
  return out;
}

/** The parts of an OpenAPI 3.1 document read here. */
interface OpenApiLike {
  paths?: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
  >;
  components?: { schemas?: Record<string, unknown> };
}

/**
 * The success answer's schema of `op` in `doc`: its 2xx `application/json` schema (an `anyOf` when
 * several 2xx statuses answer JSON with different schemas). Throws {@link OutputSchemaError} when
 * the operation or a JSON success answer is missing.
 */
function successSchema(doc: OpenApiLike, [method, path]: ApiOperation): unknown {
  const op = doc.paths?.[path]?.[method];
  if (!op) throw new OutputSchemaError(`the API document has no operation ${method.toUpperCase()} ${path}`);
  const schemas = Object.entries(op.responses ?? {})
    .filter(([status]) => /^2\d\d$/.test(status))
    .map(([, r]) => r.content?.["application/json"]?.schema)
    .filter((s) => s !== undefined);
  const distinct = [...new Map(schemas.map((s) => [JSON.stringify(s), s])).values()];
  if (distinct.length === 0)
    throw new OutputSchemaError(
      `${method.toUpperCase()} ${path} has no 2xx application/json answer in the API document`,
    );
  return distinct.length === 1 ? distinct[0] : { anyOf: distinct };
}

/**
 * The self-contained JSON Schema of a tool's answer: `top` with every component it reaches,
 * directly or through others, in `definitions` (its references rewritten to `#/definitions/…`).
 * `definitions`, not 2020-12's `$defs`: the SDK labels every tool schema draft-07 (`$schema`), and
 * the API's schemas use only keywords draft-07 has, so the schema is what its label says; a
 * 2020-12 validator resolves the same pointers. When `top` is itself only a `$ref`, the
 * component's body is the schema's top (so it reads `type: object` there, as MCP asks) and goes
 * into `definitions` only if it refers to itself.
 */
function selfContained(doc: OpenApiLike, top: unknown, extra: JsonSchema = {}): JsonSchema {
  const components = doc.components?.schemas ?? {};
  const component = (name: string) => {
    const c = components[name];
    if (c === undefined) throw new OutputSchemaError(`$ref ${COMPONENTS}${name} has no target in the API document`);
    return c;
  };
  const ref = (top as { $ref?: unknown } | null)?.$ref;
  const onlyRef = typeof ref === "string" && ref.startsWith(COMPONENTS) && Object.keys(top as object).length === 1;
  const seen = new Set<string>();
  const root = localise(onlyRef ? component(ref.slice(COMPONENTS.length)) : top, seen) as JsonSchema;
  const defs: Record<string, unknown> = {};
  const queue = [...seen];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (name in defs) continue;
    const found = new Set<string>();
    defs[name] = localise(component(name), found);
    queue.push(...[...found].filter((n) => !(n in defs)));
  }
  const sorted = Object.fromEntries(Object.entries(defs).sort(([a], [b]) => a.localeCompare(b)));
  return { ...root, ...extra, ...(Object.keys(sorted).length ? { definitions: sorted } : {}) };
}

/** A tool's `outputSchema` from `doc` for `out` (see {@link outputSchemas}). */
function outputSchema(doc: OpenApiLike, out: ToolOutput): JsonSchema {
  if ("ops" in out) {
    const schemas = out.ops.map((op) => successSchema(doc, op));
    return schemas.length === 1
      ? selfContained(doc, schemas[0])
      : selfContained(doc, { type: "object", anyOf: schemas });
  }
  const properties = Object.fromEntries(
    Object.entries(out.fields).map(([k, f]) => [k, Array.isArray(f) ? successSchema(doc, f as ApiOperation) : f]),
  );
  return selfContained(doc, {
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  });
}

/** Output schemas already built, by document (the gateway builds a server per `/mcp` request). */
const built = new WeakMap<object, Record<ToolName, JsonSchema>>();

/**
 * Every tool's `outputSchema` (MCP 2025-06-18) from the API's OpenAPI 3.1 document — the one
 * `GET /v1/openapi.json` serves (docs/adr/0189): the success answer's schema of the operation the
 * tool calls ({@link TOOL_OUTPUTS}), `anyOf` when it calls one of two, self-contained (`definitions`),
 * `type: object` at the top. The tool's `structuredContent` is that answer, so it validates.
 * Memoised per document object. Throws {@link OutputSchemaError} naming the tool when the
 * document lacks what one needs.
 */
export function outputSchemas(document: object): Record<ToolName, JsonSchema> {
  let schemas = built.get(document);
  if (schemas) return schemas;
  schemas = {} as Record<ToolName, JsonSchema>;
  for (const [tool, out] of Object.entries(TOOL_OUTPUTS) as [ToolName, ToolOutput][]) {
    try {
      schemas[tool] = outputSchema(document, out);
    } catch (err) {
      throw new OutputSchemaError(`tool ${tool}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  built.set(document, schemas);
  return schemas;
}

/**
 * A schema the SDK's `registerTool` takes as `outputSchema` that shows `schema` in `tools/list`
 * and lets every object through (the answer is the API's own, already its schema's shape; a
 * client checks it against the advertised schema). The same device as args.ts's `arg` (docs/adr/0174).
 */
export function advertised(schema: JsonSchema): z.ZodObject {
  let carrier = carriers.get(schema);
  if (!carrier) carriers.set(schema, (carrier = z.object({}).catchall(z.any()).meta(schema)));
  return carrier;
}

/** {@link advertised}'s schemas already made, by JSON Schema (memoised with the document's). */
const carriers = new WeakMap<JsonSchema, z.ZodObject>();

/**
 * The API's OpenAPI document from `GET <baseUrl>/openapi.json` (what `aps mcp` reads at start to
 * build its tools' `outputSchema`s, docs/adr/0189). Throws {@link ApsApiError} when the server
 * cannot be reached or refuses, and {@link OutputSchemaError} when the answer is not an object.
 */
export async function fetchOpenApiDocument(opts: ApsApiOptions): Promise<Record<string, unknown>> {
  const r = await new ApsApi(opts).get<unknown>("/openapi.json");
  if (r.body === null || typeof r.body !== "object" || Array.isArray(r.body))
    throw new OutputSchemaError(`GET ${opts.baseUrl}/openapi.json did not answer a JSON document`);
  return r.body as Record<string, unknown>;
}
