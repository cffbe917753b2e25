import { monotonicFactory } from "ulidx";

const ulid = monotonicFactory();

/**
 * A new time-ordered identifier: `prefix` + ULID (26 Crockford base32 chars). Identifiers made
 * in one process are strictly increasing, so `ORDER BY id` is creation order.
 */
export function newId(prefix: string): string {
  return prefix + ulid();
}
