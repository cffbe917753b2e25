import { ApsError } from "./errors.js";
import { isStorable } from "./limits.js";

/**
 * Opaque keyset-pagination cursors made of a tuple of strings (docs/design/edge.md#request-path "Lists"), as
 * base64url JSON. Lists keyed by (timestamp, id…) use the timestamp's PostgreSQL text form, which
 * round-trips exactly (microseconds), checked with `PG_TIMESTAMPTZ_TEXT` before it reaches SQL.
 */
export function encodeTupleCursor(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/**
 * True for PostgreSQL's text output of a timestamptz that denotes a real instant, e.g.
 * `2026-11-21 23:43:50.719123+00` (calendar fields checked, so `2026-02-31 …` is refused).
 */
export function PG_TIMESTAMPTZ_TEXT(x: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?([+-]\d{2})(?::(\d{2}))?$/.exec(x);
  if (!m) return false;
  const [, y, mo, d, h, mi, se] = m.map(Number);
  const date = new Date(Date.UTC(y!, mo! - 1, d, h, mi, se));
  return (
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo! - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === se
  );
}

/**
 * Decodes a cursor of `arity` strings made by `encodeTupleCursor`; `checks[i]`, when given, must
 * accept part i. Throws ApsError `invalid_request` for anything else (tampered text, wrong
 * shape, U+0000), so a bad cursor is a 400 and never reaches the database as an error.
 */
export function decodeTupleCursor(
  text: string,
  arity: number,
  checks: (((part: string) => boolean) | undefined)[] = [],
): string[] {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    v = undefined;
  }
  if (
    !Array.isArray(v) ||
    v.length !== arity ||
    !v.every((x, i) => typeof x === "string" && isStorable(x) && x.length <= 256 && (checks[i]?.(x) ?? true))
  ) {
    throw new ApsError("invalid_request", "cursor: not a cursor returned by this list");
  }
  return v as string[];
}
