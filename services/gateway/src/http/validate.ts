import { z } from "zod";
import { ApsError, isStorable } from "@aps/platform";
import { closestName, fieldsAt } from "./suggest.js";

/**
 * Parses `value` with `schema` or throws 400 `invalid_request` naming every bad field
 * (`where` is "body" or "query"). Object schemas are `strict`, so unknown fields are refused.
 * A query parameter may be given more than once only when named in `repeatable` (`?tag=a&tag=b`,
 * docs/reference/editing.md).
 */
export function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
  where: "body" | "query",
  repeatable: readonly string[] = [],
): T {
  if (where === "query") refuseRepeated(value, repeatable);
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const detail = r.error.issues
    .map((i) => {
      const path = [where, ...i.path.map(String)].join(".");
      if (i.code === "unrecognized_keys") return unknownFields(schema, i.path, i.keys, path);
      return `${path}: ${i.message}`;
    })
    .join("; ");
  throw new ApsError("invalid_request", detail);
}

/**
 * 400 for a query parameter given more than once (`?limit=5&limit=6`: the simple query parser
 * makes it an array), in plain words instead of the validator's (docs/adr/0123).
 */
function refuseRepeated(query: unknown, repeatable: readonly string[]): void {
  if (typeof query !== "object" || query === null) return;
  const repeated = Object.entries(query).filter(([k, v]) => Array.isArray(v) && !repeatable.includes(k));
  if (repeated.length === 0) return;
  const names = repeated.map(([k, v]) => `\`${k}\` ${(v as unknown[]).length} times`).join(", ");
  throw new ApsError("invalid_request", `query parameter given more than once (${names}); give each parameter once`);
}

/** "unknown field `x` (did you mean `y`?)" for each unknown key, naming the closest known field (docs/adr/0123). */
function unknownFields(schema: z.ZodType, at: readonly PropertyKey[], keys: string[], path: string): string {
  const known = fieldsAt(schema, at);
  return keys
    .map((k) => {
      const near = closestName(k, known);
      const hint = near ? ` (did you mean \`${near}\`?)` : known.length ? ` (known: ${known.join(", ")})` : "";
      return `${path}: unknown field \`${k}\`${hint}`;
    })
    .join("; ");
}

/**
 * `schema` (a string schema that is not already a platform `text()`, which checks this itself) refined to text PostgreSQL can store exactly as sent (docs/architecture.md §4
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
