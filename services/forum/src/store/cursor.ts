import { ApsError } from "@aps/platform";

/** Identifiers a cursor may carry: a post or comment id (prefix + ULID). */
const ID = /^[pc]_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Position after the last item of a page (keyset pagination, docs/design/edge.md#request-path). */
export type Cursor = { sort: "hot"; heat: number; id: string } | { sort: "new"; id: string };

/** Encodes a cursor as opaque base64url text. */
export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c.sort === "hot" ? ["h", c.heat, c.id] : ["n", c.id])).toString("base64url");
}

/**
 * Decodes a cursor made by `encodeCursor` for the same `sort`. Throws `invalid_request` for
 * anything else (tampered text, or a cursor of the other sort order).
 */
export function decodeCursor(text: string, sort: "hot" | "new"): Cursor {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw new ApsError("invalid_request", "cursor: not a cursor returned by this list");
  }
  if (
    Array.isArray(v) &&
    sort === "hot" &&
    v[0] === "h" &&
    typeof v[1] === "number" &&
    Number.isFinite(v[1]) &&
    typeof v[2] === "string" &&
    ID.test(v[2])
  ) {
    return { sort, heat: v[1], id: v[2] };
  }
  if (Array.isArray(v) && sort === "new" && v[0] === "n" && typeof v[1] === "string" && ID.test(v[1]))
    return { sort, id: v[1] };
  throw new ApsError("invalid_request", "cursor: not a cursor returned by this list (or of another sort order)");
}
