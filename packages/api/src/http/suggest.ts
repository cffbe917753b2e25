import { z } from "zod";
import { distance } from "fastest-levenshtein";

/** A name compared without case, `_` or `-`: `isArchDesign` and `is_arch_design` are the same. */
function normal(s: string): string {
  return s.toLowerCase().replace(/[_-]/g, "");
}

/** True when `a` and `b` are the same words in another case or separator (`parent_id`, `parentId`). */
export function sameWords(a: string, b: string): boolean {
  return a !== b && normal(a) === normal(b);
}

/**
 * The known name closest to `unknown` (Levenshtein distance of the normalised names, the
 * `fastest-levenshtein` package), or undefined when none is close: at most a third of its
 * length, and at least 2, edits away.
 */
export function closestName(unknown: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = distance(normal(unknown), normal(name));
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(normal(unknown).length / 3)) ? best.name : undefined;
}

/** The field names of the object schema found at `path` inside `schema`, or [] when there is none. */
export function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: unknown = schema;
  for (const p of path) {
    const shape = s instanceof z.ZodObject ? (s.shape as Record<string, unknown>) : undefined;
    s = shape && typeof p === "string" ? shape[p] : undefined;
    while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}
