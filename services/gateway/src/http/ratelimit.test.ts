import pg from "pg";
import { rateLimitHeaderValues, RequestRateLimiter } from "./ratelimit.js";

/**
 * The limiter itself (ADR 0070): counting, separate budgets per policy and partition, the IETF
 * header syntax, and the fallback when the shared store is unreachable (a stub: a PostgreSQL
 * pool pointed at a closed port, since the machine's server must not be stopped).
 */
describe("RequestRateLimiter", () => {
  it("counts per policy and partition; the N+1th request in a window is refused with the seconds left", async () => {
    const rl = new RequestRateLimiter({ keyedPerMinute: 3, anonPerMinute: 2 }, { kind: "memory" });
    const keyed = [];
    for (let i = 0; i < 4; i++) keyed.push(await rl.consume("keyed", "ext_A"));
    expect(keyed.map((s) => [s.allowed, s.used, s.remaining])).toEqual([
      [true, 1, 2],
      [true, 2, 1],
      [true, 3, 0],
      [false, 4, 0],
    ]);
    expect(keyed[3]!.resetSeconds).toBeGreaterThanOrEqual(59);
    expect(keyed[3]!.resetSeconds).toBeLessThanOrEqual(60);
    // another agent, and the anonymous policy for the same string, have their own budgets
    expect(await rl.consume("keyed", "ext_B")).toMatchObject({ allowed: true, remaining: 2, limit: 3 });
    expect(await rl.consume("anon", "ext_A")).toMatchObject({ allowed: true, remaining: 1, limit: 2, policy: "anon" });
    // peek does not count
    expect(await rl.peek("keyed", "ext_B")).toMatchObject({ used: 1, remaining: 2 });
    expect(await rl.peek("keyed", "ext_B")).toMatchObject({ used: 1, remaining: 2 });
    expect(await rl.peek("anon", "10.0.0.9")).toEqual({ policy: "anon", limit: 2, used: 0, remaining: 2, resetSeconds: 0 });
  });

  it("writes draft-ietf-httpapi-ratelimit-headers-10 field values", () => {
    expect(rateLimitHeaderValues({ policy: "keyed", limit: 600, used: 1, remaining: 599, resetSeconds: 42 })).toEqual({
      policy: '"keyed";q=600;w=60',
      limit: '"keyed";r=599;t=42',
    });
  });

  it("with the PostgreSQL store unreachable (stub: a closed port), limits still hold per process (insurance limiter), never unlimited", async () => {
    const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 500 });
    pool.on("error", () => undefined);
    try {
      const rl = new RequestRateLimiter({ keyedPerMinute: 2, anonPerMinute: 2 }, { kind: "postgres", pool, schema: "gateway" });
      const states = [];
      for (let i = 0; i < 3; i++) states.push(await rl.consume("anon", "192.0.2.1"));
      expect(states.map((s) => [s.allowed, s.remaining])).toEqual([
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
    } finally {
      await pool.end();
    }
  });
});
