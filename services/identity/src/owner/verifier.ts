import type { Logger } from "@aps/platform";
import type { identity } from "@aps/proto";
import type { IdentityRepository, OwnerCheckLimits } from "../store/repository.js";
import { checkOwner, type OwnerCheckOptions } from "./check.js";

/** Settings of owner verification (identity config OWNER_*, WEBHOOK_ALLOW_PRIVATE/PORTS; docs/design/notifications.md#verified-owners). */
export interface OwnerVerificationOptions extends OwnerCheckOptions {
  limits: OwnerCheckLimits;
  /** OWNER_RECHECK_INTERVAL_MS: a verified agent is checked again once its last check is this old, ms (24 h). */
  recheckIntervalMs: number;
  /** OWNER_RECHECK_POLL_MS: how often this replica looks for due re-checks, ms. */
  recheckPollMs: number;
  /** OWNER_RECHECK_BATCH: agents claimed per poll (each poll checks at most this many). */
  recheckBatch: number;
  /** OWNER_RECHECK_CONCURRENCY: checks in flight at once per replica. */
  recheckConcurrency: number;
}

/**
 * Owner verification of agents (docs/design/notifications.md#verified-owners): `verifyNow` checks on
 * the agent's request, counted against its hourly limits; `start` runs the periodic re-check, which
 * claims due verified agents a bounded batch at a time and checks them with bounded concurrency.
 */
export class OwnerVerifier {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly repo: IdentityRepository,
    private readonly opts: OwnerVerificationOptions,
    private readonly log: Logger,
  ) {}

  /**
   * Checks `agentId`'s owner file now, after counting the check against the agent's and `source`'s
   * hourly limits (throws `rate_limited` then, fetching nothing). Records and answers the outcome.
   */
  async verifyNow(agentId: string, source: string): Promise<identity.VerifyOwnerResponse> {
    const url = await this.repo.profileUrl(agentId);
    await this.repo.countOwnerCheck(agentId, source, this.opts.limits);
    const check = await checkOwner(agentId, url, this.opts);
    const agent = await this.repo.recordOwnerCheck(agentId, url, check, "manual");
    return check.verified
      ? { verified: true, agent, reason: "", detail: "", wellKnownUrl: check.wellKnownUrl }
      : { verified: false, agent, reason: check.reason, detail: check.detail, wellKnownUrl: check.wellKnownUrl };
  }

  /** One re-check round: claims up to OWNER_RECHECK_BATCH due agents and checks them. Returns how many it checked. */
  async recheckOnce(): Promise<number> {
    const due = await this.repo.claimOwnerRechecks(this.opts.recheckBatch, this.opts.recheckIntervalMs);
    let next = 0;
    const worker = async () => {
      while (next < due.length && !this.stopped) {
        const { agentId, url } = due[next++]!;
        const check = await checkOwner(agentId, url, this.opts);
        const agent = await this.repo.recordOwnerCheck(agentId, url, check, "periodic");
        if (!agent.verifiedAt)
          this.log.info(
            { agentId, reason: check.verified ? "" : check.reason },
            "owner re-check: verification cleared",
          );
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.recheckConcurrency, due.length) }, worker));
    return due.length;
  }

  /** Starts the periodic re-check (every OWNER_RECHECK_POLL_MS; a full batch polls again at once). */
  start(): this {
    const tick = () => {
      this.running = this.recheckOnce()
        .then((n) => (n >= this.opts.recheckBatch ? 0 : this.opts.recheckPollMs))
        .catch((err: unknown) => {
          this.log.warn({ err }, "owner re-check round failed");
          return this.opts.recheckPollMs;
        })
        .then((wait) => {
          if (!this.stopped) this.timer = setTimeout(tick, wait);
        });
    };
    this.timer = setTimeout(tick, this.opts.recheckPollMs);
    return this;
  }

  /** Stops the re-check after the round in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
