import { outsideDryRun, type Logger } from "@aps/platform";

/**
 * Runs one pass of a worker at a time: when woken (`notify`, after a commit that queued work) and
 * on a safety poll `pollMs` after the last pass ended (work queued by another replica, or left by a
 * crashed one) — woken, not polled per client (docs/design/events.md#relay, docs/design/notifications.md). A `notify` during a
 * pass asks for one more pass right after it, so nothing queued meanwhile waits for the poll. A
 * failed pass is logged at warn with `failure` and retried at the next poll. Starts stopped.
 */
export class WakeLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private halted = true;

  /**
   * @param pass one pass of the worker; it should check `stopped` between its steps.
   * @param pollMs the safety poll, ms after a pass ends.
   * @param failure the log message of a failed pass.
   */
  constructor(
    private readonly pass: () => Promise<void>,
    private readonly pollMs: number,
    private readonly log: Logger,
    private readonly failure: string,
  ) {}

  /** True before `start` and from `stop` on. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Starts the loop and runs a pass now. */
  start(): void {
    this.halted = false;
    this.notify();
  }

  /** Wakes the loop now: a pass starts, or one more follows the pass in flight. No-op when stopped. */
  notify(): void {
    if (this.halted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // a pass reads and sends only what is committed, whoever woke it (docs/design/edge.md#dry-run)
    this.running = outsideDryRun(() => this.pass())
      .catch((err: unknown) => {
        this.log.warn({ err: String(err) }, this.failure);
      })
      .finally(() => {
        this.running = undefined;
        if (this.halted) return;
        if (this.again) {
          this.again = false;
          this.notify();
        } else this.timer = setTimeout(() => this.notify(), this.pollMs);
      });
  }

  /** Stops the loop (synchronously: `stopped` is true at once) and resolves after the pass in flight. */
  async stop(): Promise<void> {
    this.halted = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
