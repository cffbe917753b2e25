import { z } from "zod";
import { ApsError, isStorable } from "@aps/platform";
import { closestName, fieldsAt, sameWords } from "./suggest.js";

/**
 * Parses `value` with `schema` or throws 400 `invalid_request` naming every bad field in plain
 * words (`where` is "body" or "query"): "`title` is required", "`events[1]`: unknown event type
 * `bogus.type`; known: …", "query parameter `limit` must be at most 100" (docs/reference/errors.md
 * "invalid_request"), from zod's own issue info (code, path, bounds, expected type), never a
 * mapping per route. Object schemas are `strict`, so unknown fields are refused, naming the right
 * one; a query is refused for an unknown parameter whatever its schema says (`?tags=` on a list
 * that takes `tag` names `tag`), so a misspelt filter never silently answers everything.
 * A query parameter may be given more than once only when named in `repeatable` (`?tag=a&tag=b`,
 * docs/reference/editing.md). A bad `cursor` or `after` alone is 400 `invalid_cursor`, the one
 * code of every cursor misuse (docs/reference/errors.md).
 */
export function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
  where: "body" | "query",
  repeatable: readonly string[] = [],
): T {
  if (where === "query") {
    refuseRepeated(value, repeatable);
    refuseUnknownParameters(schema, value);
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const detail = describeIssues(schema, value, where, r.error.issues);
  const cursorOnly = where === "query" && r.error.issues.every((i) => CURSOR_PARAMETERS.includes(String(i.path[0])));
  throw new ApsError(cursorOnly ? "invalid_cursor" : "invalid_request", detail);
}

/** Query parameters that carry a position handed out by the API (a page cursor, a feed's `after`). */
const CURSOR_PARAMETERS: readonly string[] = ["cursor", "after"];

/**
 * 400 `invalid_request` for a query parameter the schema does not name ("unknown query parameter
 * `tags` (did you mean `tag`?)"); a route that declares no query validates against an empty one.
 */
function refuseUnknownParameters(schema: z.ZodType, query: unknown): void {
  if (typeof query !== "object" || query === null) return;
  const known = fieldsAt(schema, []);
  const unknown = Object.keys(query).filter((k) => !known.includes(k));
  if (unknown.length === 0) return;
  const named = unknown.map((k) => {
    const near = known.find((n) => sameWords(n, k)) ?? closestName(k, known);
    const hint = near
      ? ` (did you mean \`${near}\`?)`
      : known.length
        ? ` (known: ${known.join(", ")})`
        : " (this operation takes none)";
    return `unknown query parameter \`${k.slice(0, 40)}\`${hint}`;
  });
  throw new ApsError("invalid_request", named.join("; "));
}

/** One line per issue, `; `-separated: what `validate` answers in `detail`. */
export function describeIssues(
  schema: z.ZodType,
  value: unknown,
  where: "body" | "query",
  issues: readonly z.core.$ZodIssue[],
): string {
  return issues
    .map((i) => {
      const name = fieldName(where, i.path);
      if (i.code === "unrecognized_keys") return unknownFields(schema, i.path, i.keys, name);
      return describeIssue(i, name, valueAt(value, i.path));
    })
    .join("; ");
}

/** How a field is named in a message: `` `title` ``, `` `events[1]` ``, "query parameter `limit`", "the body". */
function fieldName(where: "body" | "query", path: readonly PropertyKey[]): string {
  if (path.length === 0) return where === "body" ? "the body" : "the query";
  const dotted = path
    .map((p, k) => (typeof p === "number" ? `[${p}]` : k === 0 ? String(p) : `.${String(p)}`))
    .join("");
  return where === "query" ? `query parameter \`${dotted}\`` : `\`${dotted}\``;
}

/**
 * The part of `value` at `path`, or undefined. A repeatable query parameter given once is a plain
 * string that its schema reads as a one-item array, so index 0 of a string is the string itself.
 */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const p of path)
    v =
      v !== null && typeof v === "object"
        ? (v as Record<PropertyKey, unknown>)[p]
        : typeof v === "string" && p === 0
          ? v
          : undefined;
  return v;
}

/** JSON's name of `v`'s type: string, number, boolean, null, array, object. */
function jsonType(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** zod's generic messages ("Invalid input: …", "Too small: …"): replaced by ours; a schema's own message is kept. */
const ZOD_DEFAULT = /^(Invalid|Too (small|big)|Unrecognized)\b/;

/** "a string", "an integer", … for zod's `expected`. */
function article(expected: string): string {
  const name = expected === "int" ? "integer" : expected;
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

/** What is wrong with one field, in plain words, from the issue's code and its bounds. */
function describeIssue(i: z.core.$ZodIssue, name: string, given: unknown): string {
  const custom = !ZOD_DEFAULT.test(i.message);
  switch (i.code) {
    case "invalid_type":
      if (given === undefined) return `${name} is required`;
      if (custom) return `${name}: ${i.message}`;
      if (typeof given === "string" && (i.expected === "number" || i.expected === "int"))
        return `${name} must be ${article(i.expected)}, not \`${given.slice(0, 40)}\``;
      return `${name} must be ${article(i.expected)}, not ${jsonType(given)}`;
    case "too_small":
    case "too_big": {
      if (custom) return `${name}: ${i.message}`;
      const small = i.code === "too_small";
      const bound = Number(small ? i.minimum : i.maximum);
      const inclusive = i.inclusive !== false;
      const word = small ? (inclusive ? "at least" : "more than") : inclusive ? "at most" : "less than";
      if (i.origin === "string")
        return small && bound === 1 && inclusive
          ? `${name} must not be empty`
          : `${name} must be ${word} ${bound} characters`;
      if (i.origin === "array" || i.origin === "set") return `${name} must have ${word} ${bound} items`;
      return `${name} must be ${word} ${bound}`;
    }
    case "invalid_value":
      if (custom) return `${name}: ${i.message}`;
      return `${name}: unknown value \`${String(given)}\`; known: ${i.values.map(String).join(", ")}`;
    case "invalid_format":
      return custom ? `${name}: ${i.message}` : `${name} is not a valid ${i.format}`;
    case "invalid_union": {
      // The union's own message ("must be 1 or -1"), else one from any branch, says more than "matches no form".
      if (custom) return /^(is|must|has) /.test(i.message) ? `${name} ${i.message}` : `${name}: ${i.message}`;
      const own = i.errors.flat().find((e) => !ZOD_DEFAULT.test(e.message));
      return own ? `${name}: ${own.message}` : `${name} has the wrong type or value`;
    }
    default:
      if (!custom) return `${name} is not valid`;
      if (!i.path.length) return i.message;
      // "is required …", "must …": a sentence about the field; anything else follows a colon.
      return /^(is|must|differs|has) /.test(i.message) ? `${name} ${i.message}` : `${name}: ${i.message}`;
  }
}

/**
 * 400 for a query parameter given more than once (`?limit=5&limit=6`: the simple query parser
 * makes it an array), in plain words instead of the validator's (docs/design/agents.md#discovery).
 */
function refuseRepeated(query: unknown, repeatable: readonly string[]): void {
  if (typeof query !== "object" || query === null) return;
  const repeated = Object.entries(query).filter(([k, v]) => Array.isArray(v) && !repeatable.includes(k));
  if (repeated.length === 0) return;
  const names = repeated.map(([k, v]) => `\`${k}\` ${(v as unknown[]).length} times`).join(", ");
  throw new ApsError("invalid_request", `query parameter given more than once (${names}); give each parameter once`);
}

/**
 * "unknown field `x` (did you mean `y`?)" for each unknown key, naming the closest known field
 * (docs/design/agents.md#discovery); a known field in another case (`parent_id` for `parentId`) is named with the
 * naming rule: request fields are camelCase, except the seed's `is_arch_design` (docs/design/edge.md#index-405-and-404).
 */
function unknownFields(schema: z.ZodType, at: readonly PropertyKey[], keys: string[], where: string): string {
  const known = fieldsAt(schema, at);
  const prefix = at.length ? `${where}: ` : "";
  return keys
    .map((k) => {
      const same = known.find((n) => sameWords(n, k));
      if (same)
        return `${prefix}unknown field \`${k}\`: ${same.includes("_") ? "" : "request fields are camelCase, "}send \`${same}\``;
      const near = closestName(k, known);
      const hint = near ? ` (did you mean \`${near}\`?)` : known.length ? ` (known: ${known.join(", ")})` : "";
      return `${prefix}unknown field \`${k}\`${hint}`;
    })
    .join("; ");
}

/**
 * `schema` (a string schema that is not already a platform `text()`, which checks this itself) refined to text PostgreSQL can store exactly as sent (docs/design/edge.md#request-path
 * "Text is stored exactly as sent"): no U+0000, which a `text` column cannot hold (the insert
 * would fail as a 500), and no unpaired UTF-16 surrogate, which UTF-8 cannot encode (it would be
 * stored as U+FFFD). Either makes `validate` answer 400 `invalid_request`.
 */
export function storable<S extends z.ZodType<string>>(schema: S): S {
  return schema.refine(isStorable, { message: "must not contain U+0000 or an unpaired surrogate" });
}

/** A path identifier of the given prefix + ULID; anything else is simply not found. */
export function pathId(prefix: string, raw: string | string[] | undefined, what: string): string {
  if (typeof raw === "string" && new RegExp(`^${prefix}[0-9A-HJKMNP-TV-Z]{26}$`).test(raw)) return raw;
  throw new ApsError("not_found", `${what} ${String(raw)} not found`);
}
