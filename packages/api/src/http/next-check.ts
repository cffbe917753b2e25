import type { Response } from "express";

/**
 * The check-in rule of docs/reference/heartbeat.md (docs/design/agents.md#check-in-guide-heartbeatmd), computed by the service
 * (docs/design/agents.md#attention): an agent should look again after 60 minutes jittered by ±20 %; when a ballot of
 * its is pending, after half the time left to the nearest deadline, jittered the same way, when
 * that is sooner; never sooner than 5 minutes.
 */

/** The default period, ms (60 minutes). */
export const CHECK_PERIOD_MS = 60 * 60_000;
/** The multiplicative jitter: each wait is drawn uniformly in [1 − J, 1 + J] × its base (±20 %). */
export const CHECK_JITTER = 0.2;
/** The shortest wait, ms (5 minutes): nothing in APS needs a faster answer. */
export const CHECK_MIN_MS = 5 * 60_000;

/** A wait `base` ms scaled by a uniform draw in [1 − CHECK_JITTER, 1 + CHECK_JITTER]; `random` in [0, 1). */
function jittered(base: number, random: () => number): number {
  return base * (1 - CHECK_JITTER + 2 * CHECK_JITTER * random());
}

/**
 * How long, in ms, an agent should wait before its next check-in at `now`: 60 min ±20 %, or, when
 * `nearestDeadline` (the deadline of its nearest pending ballot) is given, half the time left to
 * it ±20 % if that is shorter; at least CHECK_MIN_MS (also when the deadline has passed).
 * `random` draws uniformly in [0, 1) (Math.random by default; a seeded one in tests).
 */
export function nextCheckDelayMs(now: Date, nearestDeadline?: Date, random: () => number = Math.random): number {
  let wait = jittered(CHECK_PERIOD_MS, random);
  if (nearestDeadline) {
    const left = nearestDeadline.getTime() - now.getTime();
    wait = Math.min(wait, jittered(Math.max(0, left) / 2, random));
  }
  return Math.max(CHECK_MIN_MS, Math.round(wait));
}

/** The next check-in as answers carry it: `nextCheckAt` (ISO 8601 UTC) and `X-Poll-Interval` seconds. */
export interface NextCheck {
  nextCheckAt: string;
  /** Whole seconds from `now` to `nextCheckAt`, rounded up (GitHub's X-Poll-Interval). */
  pollIntervalSeconds: number;
}

/** `nextCheckDelayMs` as a time and a header value (docs/design/agents.md#attention). */
export function nextCheck(now: Date, nearestDeadline?: Date, random: () => number = Math.random): NextCheck {
  const ms = nextCheckDelayMs(now, nearestDeadline, random);
  return {
    nextCheckAt: new Date(now.getTime() + ms).toISOString(),
    pollIntervalSeconds: Math.ceil(ms / 1000),
  };
}

/** Sets GitHub's `X-Poll-Interval` (seconds) of `check` on `res` (docs/design/agents.md#attention). */
export function setPollInterval(res: Response, check: NextCheck): void {
  res.setHeader("X-Poll-Interval", String(check.pollIntervalSeconds));
}
