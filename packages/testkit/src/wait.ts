import { randomInt } from "node:crypto";
import { availableParallelism, loadavg } from "node:os";

/**
 * The factor every test deadline is stretched by (docs/design/tests.md "Waiting"): `TEST_TIME_SCALE`, a
 * number ≥ 1 (default 1), or `auto` — the machine's 1-minute load average per core, read at the
 * call, clamped to 1…10 (what CI and the stress mode set: a busy machine gets more time, the same
 * assertions). Throws on any other value.
 */
export function timeScale(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.TEST_TIME_SCALE?.trim();
  if (!v) return 1;
  if (v === "auto") return Math.min(10, Math.max(1, loadavg()[0]! / availableParallelism()));
  const n = Number(v);
  if (!Number.isFinite(n) || n < 1)
    throw new Error(`TEST_TIME_SCALE must be a number ≥ 1 or "auto", got ${JSON.stringify(v)}`);
  return n;
}

/**
 * The most {@link timeScale} may return in this run: TEST_TIME_SCALE's number, 10 under `auto` (its
 * clamp), 1 when unset. For a setting fixed once when a system starts, which a later wait cannot
 * stretch: a test system's call deadline and pool wait (test/support/system.ts).
 */
export function timeScaleCeiling(env: NodeJS.ProcessEnv = process.env): number {
  return env.TEST_TIME_SCALE?.trim() === "auto" ? 10 : timeScale(env);
}

/** `ms` stretched by {@link timeScale}: the deadline a test gives a condition, in ms. */
export function scaled(ms: number): number {
  return Math.round(ms * timeScale());
}

/** A poll interval, in ms: the time between two looks at a condition (never a wait on its own). */
const nextLook = (intervalMs: number) => new Promise<void>((r) => setTimeout(r, intervalMs));

/**
 * Retries `check` every `intervalMs` until it resolves or `timeoutMs` (stretched by
 * {@link timeScale}) have passed, then rethrows its last error. Resolves with the time it took, in
 * ms — tests report it as a measured latency (e.g. "indexed within 320 ms"), never assert on it.
 */
export async function eventually(check: () => Promise<void>, timeoutMs = 30_000, intervalMs = 100): Promise<number> {
  const t0 = Date.now();
  const limit = scaled(timeoutMs);
  for (;;) {
    try {
      await check();
      return Date.now() - t0;
    } catch (err) {
      if (Date.now() - t0 > limit) throw err;
      await nextLook(intervalMs);
    }
  }
}

/** Options of {@link waitUntil}: the deadline before scaling and the poll interval, both in ms. */
export interface WaitOptions {
  /** How long the condition may take before the wait fails, in ms, before {@link timeScale} (default 30,000). */
  timeoutMs?: number;
  /** Time between two looks at the condition, in ms (default 50). */
  intervalMs?: number;
}

/**
 * Waits until `condition` returns (or resolves to) a truthy value and resolves with that value;
 * looks every `intervalMs`. Throws `Error("timed out after N ms waiting for <what>")` once
 * `timeoutMs` × {@link timeScale} have passed — with the condition's last error, if it threw.
 */
export async function waitUntil<T>(
  what: string,
  condition: () => T | Promise<T>,
  { timeoutMs = 30_000, intervalMs = 50 }: WaitOptions = {},
): Promise<NonNullable<T>> {
  const t0 = Date.now();
  const limit = scaled(timeoutMs);
  let last: string | undefined;
  for (;;) {
    try {
      const v = await condition();
      if (v) return v;
      last = undefined;
    } catch (err) {
      last = err instanceof Error ? err.message : JSON.stringify(err);
    }
    if (Date.now() - t0 > limit)
      throw new Error(`timed out after ${Date.now() - t0} ms waiting for ${what}${last ? `: ${last}` : ""}`);
    await nextLook(intervalMs);
  }
}

/**
 * A fixed pause whose length is itself what the test is about — a delay the code under test must
 * wait out, a window that must pass, a slow peer's turn — never a wait for something to happen
 * (that is {@link waitUntil}). `why` says which; scripts/check-sleeps.mjs lists every call, and it
 * is allowed only in the files of its documented exception list. Not scaled: the length is the
 * point. `ms` in milliseconds.
 */
export function pause(ms: number, why: string): Promise<void> {
  if (!why) throw new Error("pause(ms, why): say why the test waits a fixed time");
  return new Promise((r) => setTimeout(r, ms));
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
