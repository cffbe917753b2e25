import type { Logger } from "@aps/platform";
import type { CouncilRepository } from "./store/repository.js";

/**
 * The deadline scheduler: every `tickMs` it closes the cases whose COUNCIL_DEADLINE or last call
 * has passed, then announces the decisions whose review date has come.
 * State lives in PostgreSQL (the `deadline` column), so it survives restarts; `closeDue` locks
 * each case with SKIP LOCKED, so replicas running their own scheduler never close a case twice.
 */
export class DeadlineScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: CouncilRepository,
    private readonly tickMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running = this.repo
        .closeDue()
        .then(() => this.repo.announceDueReviews())
        .catch((err: unknown) => this.log.warn({ err: String(err) }, "deadline pass failed"));
    }, this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
