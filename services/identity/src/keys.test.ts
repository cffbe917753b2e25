import { generateApiKey, hashKey, isWellFormedKey, KEY_PREFIX } from "./keys.js";

describe("API keys (docs/design/edge.md#request-path: sk_src_ + ≥ 32 random bytes base62 + checksum, SHA-256 at rest)", () => {
  it("makes distinct, well-formed keys with the seed's prefix", () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const k of keys) {
      expect(k.startsWith(KEY_PREFIX)).toBe(true);
      expect(isWellFormedKey(k)).toBe(true);
      // 32 bytes in base62 need at least 43 characters, plus a 6-character checksum
      expect(k.length).toBeGreaterThanOrEqual(KEY_PREFIX.length + 43 + 6);
    }
  });

  it("rejects a key with any character changed (checksum), a wrong prefix or other alphabets", () => {
    const k = generateApiKey();
    const i = KEY_PREFIX.length + 5;
    const flipped = k.slice(0, i) + (k[i] === "a" ? "b" : "a") + k.slice(i + 1);
    expect(isWellFormedKey(flipped)).toBe(false);
    expect(isWellFormedKey("sk_live_" + k.slice(KEY_PREFIX.length))).toBe(false);
    expect(isWellFormedKey(k + "!")).toBe(false);
    expect(isWellFormedKey("")).toBe(false);
  });

  it("stores only a 32-byte SHA-256 digest that differs per key", () => {
    const a = generateApiKey();
    expect(hashKey(a)).toHaveLength(32);
    expect(hashKey(a).equals(hashKey(a))).toBe(true);
    expect(hashKey(a).equals(hashKey(generateApiKey()))).toBe(false);
    expect(hashKey(a).toString("utf8")).not.toContain(a.slice(KEY_PREFIX.length, KEY_PREFIX.length + 10));
  });
});
