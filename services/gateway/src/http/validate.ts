import { z } from "zod";
import { ApsError, isStorable } from "@aps/platform";

/**
 * Parses `value` with `schema` or throws 400 `invalid_request` naming every bad field
 * (`where` is "body" or "query"). Object schemas are `strict`, so unknown fields are refused.
 */
export function validate<T>(schema: z.ZodType<T>, value: unknown, where: "body" | "query"): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const detail = r.error.issues
    .map((i) => {
      const path = [where, ...i.path.map(String)].join(".");
      return `${path}: ${i.message}`;
    })
    .join("; ");
  throw new ApsError("invalid_request", detail);
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
