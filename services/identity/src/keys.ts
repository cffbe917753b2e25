import { createHash, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import basex from "base-x";
import { LIVE_KEY_PREFIX } from "@aps/platform";

const base62 = basex("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

/** Prefix of every API key of a live instance (seed "Agent identity"); a sandbox's are `sk_test_` (docs/design/agents.md#sandbox). */
export const KEY_PREFIX = LIVE_KEY_PREFIX;
const CHECKSUM_LEN = 6;

/**
 * A new API key: `prefix` (`sk_src_`, or a sandbox's `sk_test_`) + base62(32 random bytes) +
 * base62(CRC32 of that text), the checksum left-padded to 6 chars. The checksum lets a secret scanner recognise a real key offline
 * (the scheme GitHub tokens use). The key is shown once and stored only as `hashKey(key)`.
 */
export function generateApiKey(prefix: string = KEY_PREFIX): string {
  // 32 bytes need 43 base62 digits; pad so every key has the same length.
  const body = base62.encode(randomBytes(32)).padStart(43, "0");
  return prefix + body + checksum(body);
}

/** True when `key` has `prefix` (default the live one), the base62 alphabet and a matching checksum. */
export function isWellFormedKey(key: string, prefix: string = KEY_PREFIX): boolean {
  if (!key.startsWith(prefix) || key.length > 128) return false;
  const rest = key.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(rest) || rest.length <= CHECKSUM_LEN) return false;
  const body = rest.slice(0, -CHECKSUM_LEN);
  return checksum(body) === rest.slice(-CHECKSUM_LEN);
}

/** SHA-256 of the whole key: the only form kept at rest. */
export function hashKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

function checksum(body: string): string {
  const n = crc32(Buffer.from(body, "utf8"));
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return base62.encode(b).padStart(CHECKSUM_LEN, "0");
}
