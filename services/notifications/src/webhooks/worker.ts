import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type pg from "pg";
import { withTransaction, type Logger } from "@aps/platform";
import { addInboxItem } from "../store/inbox.js";
import { checkTarget, type CheckedTarget, type Resolver } from "./ssrf.js";
import { signedHeaders } from "./signature.js";

/** Settings of the delivery worker (the service's config). */
export interface DeliveryOptions {
  /** Delays before each retry, ms (WEBHOOK_RETRY_SCHEDULE); after the last failure the endpoint is disabled. */
  retrySchedule: number[];
  /** Time limit of one attempt, ms. */
  timeoutMs: number;
  /** Safety poll, ms. */
  pollMs: number;
  /** WEBHOOK_ALLOW_PRIVATE (tests and local setups only). */
  allowPrivate: boolean;
  /** DNS seam for tests; the system resolver by default. */
  resolve?: Resolver;
}

/** Deliveries claimed per pass; they are sent concurrently. */
const BATCH = 16;

interface Claimed {
  seq: string;
  id: string;
  webhook_id: string;
  body: string;
  attempts: number;
  url: string;
  secret: string;
  agent_id: string;
  event_id: string;
  /** The endpoint was disabled after this delivery was queued: it fails without an attempt. */
  disabled: boolean;
}

/** Outcome of one attempt. */
interface Attempt {
  ok: boolean;
  statusCode: number;
  error: string;
}

/**
 * The webhook delivery worker (issue #14 "Webhooks", Standard Webhooks "Retries"): takes due rows
 * of the durable queue `webhook_deliveries` (FOR UPDATE SKIP LOCKED, so replicas share the work),
 * leases them for one attempt, and POSTs the stored body, signed anew with the same `webhook-id`
 * on every attempt. A 2xx ends the delivery; a timeout, network error or other status schedules
 * the next attempt after `retrySchedule[attempts − 1]`; past the schedule the delivery fails, the
 * endpoint is disabled (its other queued deliveries fail with it) and its owner gets a
 * `webhook.disabled` inbox item. The SSRF guard runs again before each attempt, and the request
 * connects to the address it checked. At least once: a worker that dies mid-attempt leaves a
 * lease that expires, and the attempt is made again.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: DeliveryOptions,
    private readonly log: Logger,
  ) {}

  /** Starts polling (and delivering what is due now). */
  start(): void {
    this.stopped = false;
    this.notify();
  }

  /** Wakes the worker now (after a commit that queued deliveries). */
  notify(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.notify();
      } else this.timer = setTimeout(() => this.notify(), this.opts.pollMs);
    });
  }

  /** Stops polling and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private async loop(): Promise<void> {
    try {
      for (;;) {
        const batch = await this.claim();
        if (batch.length === 0) return;
        await Promise.all(batch.map((d) => this.deliver(d)));
        if (this.stopped) return;
      }
    } catch (err) {
      this.log.warn({ err: String(err) }, "webhook delivery pass failed; retrying at the next poll");
    }
  }

  /** Leases due deliveries for one attempt (lease = timeout + 10 s; an expired lease is due again). */
  private async claim(): Promise<Claimed[]> {
    const lease = this.opts.timeoutMs + 10_000;
    const r = await this.pool.query<Claimed>(
      `UPDATE webhook_deliveries d SET next_attempt_at = now() + ($1::int * interval '1 millisecond')
       FROM webhooks w
       WHERE w.id = d.webhook_id AND d.seq IN (
         SELECT seq FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
         ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING d.seq::text, d.id, d.webhook_id, d.body, d.attempts, d.event_id, w.url, w.secret, w.agent_id,
                 w.disabled_at IS NOT NULL AS disabled`,
      [lease, BATCH],
    );
    return r.rows;
  }

  private async deliver(d: Claimed): Promise<void> {
    if (d.disabled) {
      await this.pool.query(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint disabled', next_attempt_at = NULL
         WHERE seq = $1 AND status = 'pending'`,
        [d.seq],
      );
      return;
    }
    let outcome: Attempt;
    try {
      const target = await checkTarget(d.url, this.opts.allowPrivate, this.opts.resolve);
      outcome = await this.post(target, d);
    } catch (err) {
      outcome = { ok: false, statusCode: 0, error: (err as Error).message.slice(0, 500) };
    }
    await this.record(d, outcome);
  }

  /** One signed POST to the checked address (TLS still verifies the URL's host name). */
  private post(target: CheckedTarget, d: Claimed): Promise<Attempt> {
    const headers = {
      ...signedHeaders(d.secret, d.id, Math.floor(Date.now() / 1000), d.body),
      "content-type": "application/json",
      "user-agent": "APS-Webhooks/1",
    };
    const pinned: LookupFunction = (_host, options, cb) => {
      if ((options as { all?: boolean }).all)
        (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: target.address, family: target.family },
        ]);
      else cb(null, target.address, target.family);
    };
    const mod = target.url.protocol === "https:" ? https : http;
    return new Promise<Attempt>((resolve) => {
      const req = mod.request(
        target.url,
        { method: "POST", headers, lookup: pinned, timeout: this.opts.timeoutMs },
        (res) => {
          res.resume();
          res.on("end", () => {
            const code = res.statusCode ?? 0;
            const ok = code >= 200 && code < 300;
            resolve({ ok, statusCode: code, error: ok ? "" : `HTTP ${code}` });
          });
          res.on("error", (e) => resolve({ ok: false, statusCode: res.statusCode ?? 0, error: e.message }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`timed out after ${this.opts.timeoutMs} ms`)));
      req.on("error", (e) => resolve({ ok: false, statusCode: 0, error: e.message.slice(0, 500) }));
      req.end(d.body);
    });
  }

  /** Records an attempt; schedules the next one, or gives up and disables the endpoint. */
  private async record(d: Claimed, a: Attempt): Promise<void> {
    const attempts = d.attempts + 1;
    if (a.ok) {
      await this.pool.query(
        `UPDATE webhook_deliveries SET status = 'succeeded', attempts = $2, last_status_code = $3, last_error = NULL,
                delivered_at = now(), next_attempt_at = NULL WHERE seq = $1`,
        [d.seq, attempts, a.statusCode],
      );
      return;
    }
    const delay = this.opts.retrySchedule[attempts - 1];
    if (delay !== undefined) {
      // `status = 'pending'`: an attempt in flight while another delivery disabled the endpoint
      // finds its row already failed ("endpoint disabled") and leaves it so — nothing is retried
      // for a disabled endpoint (the disabling UPDATE holds the row lock until it commits).
      await this.pool.query(
        `UPDATE webhook_deliveries SET attempts = $2, last_status_code = $3, last_error = $4,
                next_attempt_at = now() + ($5::int * interval '1 millisecond') WHERE seq = $1 AND status = 'pending'`,
        [d.seq, attempts, a.statusCode || null, a.error, delay],
      );
      return;
    }
    await withTransaction(this.pool, async (tx) => {
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'failed', attempts = $2, last_status_code = $3, last_error = $4,
                next_attempt_at = NULL WHERE seq = $1`,
        [d.seq, attempts, a.statusCode || null, a.error],
      );
      const reason = `delivery ${d.id} failed ${attempts} times; last error: ${a.error}`;
      const off = await tx.query(
        "UPDATE webhooks SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL",
        [d.webhook_id, reason],
      );
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint disabled', next_attempt_at = NULL
         WHERE webhook_id = $1 AND status = 'pending'`,
        [d.webhook_id],
      );
      if (off.rowCount)
        await addInboxItem(tx, d.agent_id, {
          eventId: d.id,
          type: "webhook.disabled",
          occurredAt: new Date().toISOString(),
          data: { webhookId: d.webhook_id, url: d.url, reason, link: `/v1/me/webhooks/${d.webhook_id}` },
        });
    });
    this.log.warn({ webhookId: d.webhook_id, deliveryId: d.id }, "webhook disabled after its last retry failed");
  }
}
