import { randomFillSync } from "node:crypto";
import { monotonicFactory } from "ulidx";

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let next = POOL_BYTES;

/**
 * A uniform number in [0, 1) from the OS CSPRNG, drawn from a 4 KiB pool of random bytes refilled
 * by one `randomFillSync` call: ulidx's default PRNG asks `crypto.getRandomValues` for ONE byte
 * per character (16 calls per ULID), which showed as 3.7 % of the CPU of a vote load (the
 * profile in docs/performance.md). Same source, same distribution (one byte per character, as
 * ulidx's own: 256 values over 32 symbols, exactly 8 each).
 */
function pooledPrng(): number {
  if (next >= POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 256;
}

const ulid = monotonicFactory(pooledPrng);

/**
 * A new time-ordered identifier: `prefix` + ULID (26 Crockford base32 chars). Identifiers made
 * in one process are strictly increasing, so `ORDER BY id` is creation order.
 */
export function newId(prefix: string): string {
  return prefix + ulid();
}
