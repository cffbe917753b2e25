import fc from "fast-check";

/**
 * fast-check arbitraries of the values a JSON Schema (2020-12, the subset the gateway's OpenAPI
 * document uses) accepts — the fuzz suite's valid starting points, so a route is fuzzed the day it
 * is documented (docs/design/edge.md#contract-checks). Supported: `$ref` (into the document), `const`, `enum`, `type`
 * (one or several), string `minLength`/`maxLength` (code points)/`pattern`/`format: uri`,
 * integer/number bounds, arrays (`items`, `minItems`, `maxItems`), objects (`properties`,
 * `required`, `additionalProperties`), `anyOf`/`oneOf` (any branch) and `allOf` of objects
 * (merged). Anything else yields any JSON value.
 *
 * No well-kept npm library does this for fast-check 4 (json-schema-fast-check is at 0.0.x and
 * targets fast-check 1), hence this small mapper.
 */
export type JsonSchema = Record<string, unknown>;

/** A resolver of `$ref`s within one document. */
export function resolver(doc: unknown): (ref: string) => JsonSchema {
  return (ref) => {
    if (!ref.startsWith("#/")) throw new Error(`only local $refs are supported, not ${ref}`);
    let at: unknown = doc;
    for (const token of ref.slice(2).split("/"))
      at = (at as Record<string, unknown>)[token.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (!at || typeof at !== "object") throw new Error(`$ref ${ref} points at nothing`);
    return at as JsonSchema;
  };
}

/** Texts the generator draws strings from: printable ASCII, accents, CJK, emoji (whole code points). */
const CHARS = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,") },
  { weight: 1, arbitrary: fc.constantFrom("é", "ß", "ñ", "中", "文", "ж", "🚀", "🤖") },
);

/** A string of `min`..`max` code points, not blank when `min` > 0. */
function text(min: number, max: number): fc.Arbitrary<string> {
  const cap = Math.min(max, min + 40);
  return fc
    .array(CHARS, { minLength: min, maxLength: cap })
    .map((cs) => cs.join(""))
    .map((s) => (min > 0 && s.trim() === "" ? "x" + s.slice(1) : s));
}

/** An arbitrary of values `schema` accepts; `resolve` looks `$ref`s up in the document. */
export function arbitraryOf(
  schema: JsonSchema,
  resolve: (ref: string) => JsonSchema,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (depth > 8) return fc.constant(null);
  const next = (s: unknown) => arbitraryOf((s ?? {}) as JsonSchema, resolve, depth + 1);
  if (typeof schema.$ref === "string") return next(resolve(schema.$ref));
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) return fc.oneof(...branches.map(next));
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as JsonSchema[]).map((s) => (typeof s.$ref === "string" ? resolve(s.$ref) : s));
    const merged: JsonSchema = { type: "object", properties: {}, required: [] };
    for (const p of parts) {
      Object.assign(merged.properties as object, p.properties ?? {});
      (merged.required as string[]).push(...((p.required as string[]) ?? []));
      if (p.additionalProperties === false) merged.additionalProperties = false;
    }
    return next(merged);
  }
  const types = [schema.type ?? []].flat() as string[];
  if (types.length > 1) return fc.oneof(...types.map((type) => next({ ...schema, type })));
  switch (types[0]) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({
        min: typeof schema.minimum === "number" ? schema.minimum : -1000,
        max: typeof schema.maximum === "number" ? schema.maximum : 1000,
      });
    case "number":
      return fc.double({
        min: typeof schema.minimum === "number" ? schema.minimum : -1000,
        max: typeof schema.maximum === "number" ? schema.maximum : 1000,
        noNaN: true,
      });
    case "string": {
      const min = typeof schema.minLength === "number" ? schema.minLength : 0;
      const max = typeof schema.maxLength === "number" ? schema.maxLength : 60;
      if (schema.format === "uri" || schema.format === "url")
        return fc.webUrl({ validSchemes: ["https"] }).filter((u) => u.length <= max);
      if (typeof schema.pattern === "string" && schema.pattern !== "\\S")
        return fc
          .stringMatching(new RegExp(schema.pattern, "u"))
          .filter((s) => [...s].length >= min && [...s].length <= max);
      return text(min, max);
    }
    case "array":
      return fc.array(next(schema.items), {
        minLength: typeof schema.minItems === "number" ? schema.minItems : 0,
        maxLength: Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 4, 4),
      });
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const keys = Object.keys(props);
      return fc.record(Object.fromEntries(keys.map((k) => [k, next(props[k])])), {
        requiredKeys: keys.filter((k) => required.has(k)),
      });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Every `enum` value and `const` string of the document (enum words the fuzzer keeps verbatim). */
export function enumWords(doc: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if (Array.isArray(o.enum)) for (const e of o.enum) if (typeof e === "string") out.add(e);
      if (typeof o.const === "string") out.add(o.const);
      Object.values(o).forEach(walk);
    }
  };
  walk(doc);
  return out;
}
