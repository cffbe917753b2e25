import { z } from "zod";
import { REQUIRED } from "./args.js";
import type { ApiOperation, JsonSchema } from "./output.js";

/** The document lacks a field a tool argument is taken from (an operation, its body property or parameter). */
export class InputSchemaError extends Error {}

/** What {@link ApiInputs.of} is told besides the operation and the field. */
export interface ArgOptions {
  /** The argument's description in `tools/list` (the API's own stays in `GET /v1/openapi.json`). */
  describe?: string;
  /** Optional even where the API requires the field (a tool of two operations, an action's argument). */
  optional?: boolean;
  /** Required even where the API's schema cannot say so (`is_arch_design`: it or `isArchDesign`). */
  required?: boolean;
}

/**
 * A tool's arguments taken from the API's own request schemas (docs/design/agents.md#mcp-arguments): an
 * argument is an operation's body property or parameter, so its type, bounds, enum and pattern are
 * the API's, written once in the route's declaration, and `tools/list` shows them.
 */
export interface ApiInputs {
  /**
   * The argument from field `field` of `op`: its request body's property of that name, else its
   * query, path or header parameter. Required when the API requires it and `opts.optional` is not
   * set. Throws {@link InputSchemaError} when the document lacks the operation or the field.
   * Typed `T` for the handler, which hands the value on to the API as it came (the SDK checks
   * nothing: the API's refusal names the argument, args.ts `arg`).
   */
  of<T = string | undefined>(op: ApiOperation, field: string, opts?: ArgOptions): z.ZodType<NoInfer<T>>;
  /**
   * Tool `tool`'s input schema, built by `build` once per document and then reused: it is the same
   * for every connection, and the gateway builds a server per `/mcp` request (building the twenty
   * tools' schemas cost about half of that).
   */
  schema<S extends z.ZodRawShape>(tool: string, build: () => z.ZodObject<S>): z.ZodObject<S>;
}

/** The parts of an OpenAPI 3.1 document read here. */
interface OpenApiLike {
  paths?: Record<string, Record<string, OperationLike>>;
  components?: { schemas?: Record<string, unknown>; parameters?: Record<string, unknown> };
}
interface OperationLike {
  parameters?: unknown[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
}
interface ParameterLike {
  name?: string;
  required?: boolean;
  schema?: unknown;
}

/**
 * Keywords an argument's schema keeps: what a value must be. Descriptions, examples and defaults
 * stay in the API's document, and so does `not` (the reserved tag names, ~200 bytes a tool: the API
 * names a refused one), so `tools/list` stays within its 30 KB (docs/design/agents.md#mcp-arguments).
 */
const KEPT = [
  "type",
  "enum",
  "const",
  "format",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
] as const;

/** `value` with its `$ref` (to `#/components/<kind>/…`, through chains) resolved. */
function deref(doc: OpenApiLike, value: unknown, hops = 0): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return {};
  const ref = (value as { $ref?: unknown }).$ref;
  if (ref === undefined) return value as Record<string, unknown>;
  const m = typeof ref === "string" ? /^#\/components\/(schemas|parameters)\/(.+)$/.exec(ref) : null;
  const target = m ? doc.components?.[m[1] as "schemas" | "parameters"]?.[m[2]!] : undefined;
  if (target === undefined || hops > 16) throw new InputSchemaError(`$ref ${JSON.stringify(ref)} cannot be resolved`);
  return deref(doc, target, hops + 1);
}

/** The argument's copy of `schema`: references inlined, {@link KEPT} keywords, `items` and `anyOf`/`oneOf`. */
function argSchema(doc: OpenApiLike, schema: unknown): JsonSchema {
  const s = deref(doc, schema);
  const out: JsonSchema = {};
  for (const k of KEPT) if (k in s) out[k] = s[k];
  for (const k of ["anyOf", "oneOf"] as const)
    if (Array.isArray(s[k])) out[k] = (s[k] as unknown[]).map((x) => argSchema(doc, x));
  if (s.items && typeof s.items === "object") out.items = argSchema(doc, s.items);
  return out;
}

/** A field's argument schema and whether the API requires it. */
interface Derived {
  schema: JsonSchema;
  required: boolean;
}

/** Field `field` of `op` in `doc`: its schema and whether the API requires it. */
function fieldOf(doc: OpenApiLike, [method, path]: ApiOperation, field: string): Derived {
  const op = doc.paths?.[path]?.[method];
  if (!op) throw new InputSchemaError(`the API document has no operation ${method.toUpperCase()} ${path}`);
  const body = deref(doc, op.requestBody?.content?.["application/json"]?.schema);
  const props = body.properties as Record<string, unknown> | undefined;
  if (props && Object.hasOwn(props, field)) {
    const required = Array.isArray(body.required) && (body.required as unknown[]).includes(field);
    return { schema: argSchema(doc, props[field]), required };
  }
  for (const p of op.parameters ?? []) {
    const param = deref(doc, p) as ParameterLike;
    if (param.name === field) return { schema: argSchema(doc, param.schema), required: param.required === true };
  }
  throw new InputSchemaError(`${method.toUpperCase()} ${path} has no body property or parameter ${field}`);
}

/** Tools' input schemas already built, by document (and one set for no document). */
const toolSchemas = new WeakMap<object, Map<string, z.ZodObject>>();
const toolSchemasWithoutDocument = new Map<string, z.ZodObject>();

/** The built input schemas of `document`'s tools, by tool name. */
function schemasOf(document: object | undefined): Map<string, z.ZodObject> {
  if (!document) return toolSchemasWithoutDocument;
  let m = toolSchemas.get(document);
  if (!m) toolSchemas.set(document, (m = new Map<string, z.ZodObject>()));
  return m;
}

/** Arguments' schemas already derived, by document and then by operation and field (the gateway builds a server per `/mcp` request). */
const derived = new WeakMap<object, Map<string, Derived>>();

/**
 * The {@link ApiInputs} of `document`, the API's OpenAPI 3.1 document (`GET /v1/openapi.json`).
 * Each field is derived once per document object. Without a document (`aps mcp` could not reach
 * the API) every argument is an optional value of any type, described as given: the tools are
 * still listed, and the API checks what they send.
 */
export function apiInputs(document: object | undefined): ApiInputs {
  const schemas = schemasOf(document);
  const schema = <S extends z.ZodRawShape>(tool: string, build: () => z.ZodObject<S>): z.ZodObject<S> => {
    let s = schemas.get(tool) as z.ZodObject<S> | undefined;
    if (!s) schemas.set(tool, (s = build()));
    return s;
  };
  if (!document)
    return {
      schema,
      of: (_op: ApiOperation, _field: string, opts: ArgOptions = {}) =>
        z
          .any()
          .optional()
          .meta(opts.describe ? { description: opts.describe } : {}),
    };
  let cache = derived.get(document);
  if (!cache) derived.set(document, (cache = new Map<string, Derived>()));
  const fields = cache;
  return {
    schema,
    of(op: ApiOperation, field: string, opts: ArgOptions = {}) {
      const key = `${op[0]} ${op[1]} ${field}`;
      let f = fields.get(key);
      if (!f) fields.set(key, (f = fieldOf(document, op, field)));
      const json = opts.describe ? { ...f.schema, description: opts.describe } : f.schema;
      const loose = z.any().optional().meta(json);
      if (opts.required || (f.required && !opts.optional)) REQUIRED.add(loose);
      return loose;
    },
  };
}
