// Statistics of the bench's own measurements (docs/design/tests.md#benchmarks). autocannon computes
// its percentiles itself (HDR histogram); this is for the samples the bench records (raw upsert).

/**
 * The `p`-th percentile of `sorted` (ascending) by the nearest-rank method: the smallest sample
 * with at least `p` of all samples at or below it, i.e. the sample of rank ⌈p·n⌉ (1-based).
 * p99 of 100 samples is the 99th smallest, not the largest; p50 of 4 samples is the 2nd. Returns
 * undefined for no samples.
 * @param {number[]} sorted samples in ascending order
 * @param {number} p a fraction in (0, 1]
 * @returns {number | undefined}
 */
export function percentile(sorted, p) {
  if (!(p > 0 && p <= 1)) throw new RangeError(`percentile: p must be in (0, 1], got ${p}`);
  if (sorted.length === 0) return undefined;
  // ⌈p·n⌉ with a tolerance for binary fractions (0.29 · 100 = 28.999999999999996)
  const rank = Math.max(1, Math.ceil(p * sorted.length - 1e-9));
  return sorted[rank - 1];
}
