/** Types of test/bench/lib/mix-push.mjs (docs there; docs/design/tests.md#mixed-load-bench). */
export function slowCount(n: number, fraction: number): number;
export function missedCount(expected: Iterable<string>, received: Set<string>): number;
export function lagSummary(ms: number[]): {
  n: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
};
export function shareRatio(counts: (number | null)[]): number | null;
export function killVerdict(k: {
  failedReads: number;
  failedWritesInFlight: number;
  failedWritesAfter: number;
  inFlightWrites: number;
}): { held: boolean; beyond: number };
export function lagsBetween(r: { lags: number[]; occurred: number[] }, fromMs: number, toMs: number): number[];
export function coresOf(cpuMs: number, wallMs: number): number;
export interface Receiver {
  url: string;
  slow: boolean;
  keys: Set<string>;
  lags: number[];
  occurred: number[];
  deliveries: number;
}
export function startReceivers(
  n: number,
  o: { slow: number; slowMs: number },
): Promise<{ receivers: Receiver[]; sync: () => Promise<void>; close: () => Promise<void> }>;
