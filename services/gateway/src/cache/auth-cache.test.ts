import { ApsError } from "@aps/platform";
import type { identity } from "@aps/proto";
import { AuthCache, type KeyResolver } from "./auth-cache.js";

/**
 * The cache's own bookkeeping (docs/design/edge.md#authentication-cache) with a scripted key table standing in for the
 * identity service, so races can be driven step by step: drop by agent, a rotation while a
 * lookup is in flight, no negative caching, and the entry bound. The cache in front of the real
 * identity service is tested in test/e2e/gateway-cache.test.ts.
 */
function agent(agentId: string): identity.Agent {
  return {
    agentId,
    name: agentId,
    url: "",
    sagacity: 0,
    seats: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    suspendedAt: "",
    suspendedReason: "",
    verifiedDomain: "",
    verifiedAt: "",
    keyScope: "",
  };
}

class KeyTable implements KeyResolver {
  readonly keys = new Map<string, string>();
  calls = 0;
  /** When set, lookups wait for it. */
  gate: Promise<void> | undefined;
  async authenticate(apiKey: string): Promise<identity.Agent> {
    this.calls++;
    const owner = this.keys.get(apiKey);
    if (this.gate) await this.gate;
    if (!owner) throw new ApsError("unauthenticated", "missing, unknown or revoked API key");
    return agent(owner);
  }
}

describe("AuthCache", () => {
  it("answers a known key from memory until dropAgent, which drops every key of that agent only", async () => {
    const t = new KeyTable();
    t.keys.set("k1", "ext_A").set("k2", "ext_A").set("k3", "ext_B");
    const c = new AuthCache(t, { ttlMs: 60_000, maxEntries: 100 });
    for (const k of ["k1", "k2", "k3", "k1", "k2", "k3"]) await c.authenticate(k);
    expect(t.calls).toBe(3);
    t.keys.delete("k1");
    c.dropAgent("ext_A");
    await expect(c.authenticate("k1")).rejects.toMatchObject({ code: "unauthenticated" });
    expect((await c.authenticate("k2")).agentId).toBe("ext_A");
    expect((await c.authenticate("k3")).agentId).toBe("ext_B");
    expect(t.calls).toBe(5);
  });

  it("never caches an unknown key: each attempt is asked again and holds no memory", async () => {
    const t = new KeyTable();
    const c = new AuthCache(t, { ttlMs: 60_000, maxEntries: 100 });
    for (let i = 0; i < 50; i++)
      await expect(c.authenticate(`sk_src_random${i}`)).rejects.toMatchObject({ code: "unauthenticated" });
    await expect(c.authenticate("sk_src_random0")).rejects.toMatchObject({ code: "unauthenticated" });
    expect(t.calls).toBe(51);
    expect(c.size).toBe(0);
  });

  it("a lookup in flight when the agent's key is rotated is answered but not cached", async () => {
    const t = new KeyTable();
    t.keys.set("old", "ext_A");
    const c = new AuthCache(t, { ttlMs: 60_000, maxEntries: 100 });
    let open!: () => void;
    t.gate = new Promise((r) => (open = r));
    const before = c.authenticate("old");
    // the rotation commits and is applied while that lookup is still running
    t.keys.delete("old");
    c.dropAgent("ext_A");
    open();
    expect((await before).agentId).toBe("ext_A");
    t.gate = undefined;
    await expect(c.authenticate("old")).rejects.toMatchObject({ code: "unauthenticated" });
  });

  it("concurrent lookups of one key share one call; at most maxEntries keys are held", async () => {
    const t = new KeyTable();
    for (let i = 0; i < 10; i++) t.keys.set(`k${i}`, `ext_${i}`);
    const c = new AuthCache(t, { ttlMs: 60_000, maxEntries: 4 });
    await Promise.all(Array.from({ length: 20 }, () => c.authenticate("k0")));
    expect(t.calls).toBe(1);
    for (let i = 0; i < 10; i++) await c.authenticate(`k${i}`);
    expect(c.size).toBe(4);
    // the least recently used went first
    const calls = t.calls;
    await c.authenticate("k9");
    expect(t.calls).toBe(calls);
    await c.authenticate("k0");
    expect(t.calls).toBe(calls + 1);
  });

  it("with a TTL of 0 asks identity every time", async () => {
    const t = new KeyTable();
    t.keys.set("k", "ext_A");
    const c = new AuthCache(t, { ttlMs: 0, maxEntries: 10 });
    await c.authenticate("k");
    await c.authenticate("k");
    expect(t.calls).toBe(2);
  });
});
