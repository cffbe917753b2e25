import { createHash, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import basex from "base-x";

const base62 = basex("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

/** Prefix of every API key (seed "Agent identity"). */
export const KEY_PREFIX = "sk_src_";
const CHECKSUM_LEN = 6;

/**
 * A new API key: `sk_src_` + base62(32 random bytes) + base62(CRC32 of that text), the checksum
 * left-padded to 6 chars. The checksum lets a secret scanner recognise a real key offline
 * (the scheme GitHub tokens use). The key is shown once and stored only as `hashKey(key)`.
 */
export function generateApiKey(): string {
  // 32 bytes need 43 base62 digits; pad so every key has the same length.
  const body = base62.encode(randomBytes(32)).padStart(43, "0");
  return KEY_PREFIX + body + checksum(body);
}

/** True when `key` has the prefix, the base62 alphabet and a matching checksum. */
export function isWellFormedKey(key: string): boolean {
  if (!key.startsWith(KEY_PREFIX) || key.length > 128) return false;
  const rest = key.slice(KEY_PREFIX.length);
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
