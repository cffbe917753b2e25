/** Source of the current time, injectable so tests can drive deadlines without sleeping. */
export interface Clock {
  /** Current time, UTC. */
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** The UTC calendar day of `d` as `YYYY-MM-DD` (limits count per UTC day, docs/design/edge.md#request-path). */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Seconds from `d` until the next UTC midnight (for `Retry-After` on daily limits). */
export function secondsToNextUtcDay(d: Date): number {
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - d.getTime()) / 1000));
}
