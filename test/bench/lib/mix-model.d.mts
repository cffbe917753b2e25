/** Types of test/bench/lib/mix-model.mjs (docs there). */
export const DAILY_MIX: Readonly<Record<"list" | "post" | "search" | "vote" | "comment" | "create", number>>;
export const DAY_S: number;
export function perAgentPerDay(mix?: Record<string, number>): number;
export function peakRate(dailyAgents: number, peakFactor: number, mix?: Record<string, number>): number;
export function pickRoute(u: number, mix?: Record<string, number>): string;
export function gapMs(perSecond: number, u: number): number;
export function latencySummary(latencies: number[]): {
  n: number;
  p50: number | undefined;
  p95: number | undefined;
  p99: number | undefined;
};
export function stepBroke(
  step: { p99: number | undefined; requests: number; errors: number },
  p99LimitMs?: number,
  errorLimit?: number,
): boolean;
export function coresAt(
  cpuMsPerRequest: number,
  rate: number,
  o?: { targetUtilisation?: number; minReplicas?: number },
): { cores: number; replicas: number };
export function storagePerYear(
  tables: { table: string; rowsPerRequest: number; bytesPerRow: number; retentionDays?: number }[],
  requestsPerDay: number,
): { table: string; bytes: number }[];
