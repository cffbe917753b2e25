/**
 * A clock for tests that runs with real time plus an offset the test moves forward
 * (`advance(ms)`), so deadlines can be reached without sleeping while instants still strictly
 * increase (a vote cast before a close stays before it). Implements @aps/platform's Clock.
 */
export class OffsetClock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Moves this clock `ms` milliseconds forward. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/**
 * A clock that stands still at `at` until the test sets it (`clock.at = …`): for rules that depend
 * on exact instants (UTC day boundaries, deadlines, heat). Implements @aps/platform's Clock.
 */
export class SetClock {
  constructor(public at: Date) {}

  now(): Date {
    return this.at;
  }
}
