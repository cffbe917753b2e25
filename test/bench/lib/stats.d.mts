/** The `p`-th percentile (0 < p ≤ 1) of ascending `sorted` by nearest rank (rank ⌈p·n⌉); undefined for no samples. */
export function percentile(sorted: readonly number[], p: number): number | undefined;
