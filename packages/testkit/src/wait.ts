import { randomInt } from "node:crypto";

/**
 * Retries `check` every `intervalMs` until it resolves or `timeoutMs` have passed (then rethrows
 * its last error). Resolves with the time it took, in ms — tests report it as a measured latency
 * (e.g. "indexed within 320 ms"), never assert on it.
 */
export async function eventually(check: () => Promise<void>, timeoutMs = 30_000, intervalMs = 100): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    try {
      await check();
      return Date.now() - t0;
    } catch (err) {
      if (Date.now() - t0 > timeoutMs) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/**
 * The seed of a randomised test run: `APS_TEST_SEED` (an integer 0 ≤ n < 2³²) when set — a replay —
 * else a random one. Printed either way as `[label] seed N (replay: APS_TEST_SEED=N)`, first thing,
 * so a run that fails or hangs can be replayed. Throws on a malformed `APS_TEST_SEED`.
 */
export function testSeed(label: string, env: NodeJS.ProcessEnv = process.env): number {
  const given = env.APS_TEST_SEED?.trim();
  let seed: number;
  if (given) {
    if (!/^\d+$/.test(given) || Number(given) >= 2 ** 32)
      throw new Error(`APS_TEST_SEED must be an integer from 0 to 4294967295, got ${JSON.stringify(given)}`);
    seed = Number(given);
  } else seed = randomInt(0, 2 ** 32);
  console.log(`[${label}] seed ${seed} (replay: APS_TEST_SEED=${seed})`);
  return seed;
}

/**
 * A seeded pseudo-random generator (mulberry32): returns floats in [0, 1). Tests print the seed
 * so a failing randomised run can be replayed (`APS_TEST_SEED`).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
