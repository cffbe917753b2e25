import { WakeLoop } from "../wake-loop.js";
import type pg from "pg";
import {
  checkTarget,
  GroupCommit,
  outboundRequest,
  OutboundConnections,
  withTransaction,
  type CheckedTarget,
  type Logger,
  type TargetPolicy,
  type Tx,
  webhookAttemptDuration,
  webhookAttempts,
  webhookDeliveryLag,
  webhookEndpointsDisabled,
  zeroSeries,
} from "@aps/platform";
import { DEFAULT_PENDING_MAX, feedHead, materialise, type CursorHook } from "../store/cursor.js";
import { addInboxItem } from "../store/inbox.js";
import { signedHeaders } from "./signature.js";

/** Settings of the delivery worker (the service's config). */
export interface DeliveryOptions {
  /** Delays before each retry, ms (WEBHOOK_RETRY_SCHEDULE); after the last failure the endpoint is disabled. */
  retrySchedule: number[];
  /**
   * Hard deadline of one attempt, ms (WEBHOOK_ATTEMPT_TIMEOUT_MS): connect, request, status and
   * the answer (up to ANSWER_MAX_BYTES) all within it.
   */
  attemptTimeoutMs: number;
  /** Attempts in flight at once in this worker (WEBHOOK_CONCURRENCY), ≥ 1. */
  concurrency: number;
  /**
   * A 2xx within this many ms is a quick success (WEBHOOK_QUICK_MS, default QUICK_MS; capped at
   * half the attempt deadline): anything slower marks the endpoint `slow`, which holds at most
   * half the pool (docs/design/notifications.md#fair-shares).
   */
  quickMs?: number;
  /**
   * Endpoints of one owning agent in flight at once, across replicas (WEBHOOK_SLOTS_PER_AGENT,
   * default SLOTS_PER_AGENT; docs/design/notifications.md#fair-shares).
   */
  slotsPerAgent?: number;
  /** Safety poll, ms (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** The SSRF guard's rules (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS; DNS seam for tests). */
  policy: TargetPolicy;
  /**
   * At most this many pending deliveries per endpoint (DEFAULT_PENDING_MAX when absent; no env
   * variable sets it, a test does): the window of its feed events queued at once; the rest waits in the feed behind its
   * cursor (docs/design/notifications.md#per-endpoint-feed-cursor).
   */
  pendingMax?: number;
  /** APS_LIVEMODE: the `livemode` every webhook body of this instance carries (docs/design/agents.md#sandbox); default true. */
  livemode?: boolean;
}

/** At most this much of an answer is read, bytes; then the connection is closed. */
export const ANSWER_MAX_BYTES = 4096;

/** The default quick-success bound, ms (DeliveryOptions `quickMs`). */
export const QUICK_MS = 1_000;

/** The default number of one agent's endpoints in flight at once (DeliveryOptions `slotsPerAgent`). */
export const SLOTS_PER_AGENT = 2;

/** A lease outlives the attempt deadline by this much, ms (time to record the outcome). */
const LEASE_MARGIN_MS = 10_000;

/**
 * At most this many due deliveries of a healthy endpoint are claimed at once and sent one after
 * another, their outcomes recorded in one transaction (docs/design/notifications.md#batches): the store's work per
 * delivery (statements, commits) is divided by up to this much. A batch stops at its first
 * attempt that is not a quick success; what it did not send is due again at once. A worker lost
 * mid-batch sends the batch again (at least once). A slow endpoint is claimed one delivery at a time.
 */
export const DELIVERY_BATCH = 8;

/**
 * After a batch of quick successes an endpoint with more due deliveries keeps its slot for its
 * next batch (the record and the next claim in one transaction), until it has sent this many in a
 * row; then it yields the slot to the endpoints waiting for one.
 */
const CHAIN_MAX = 32;

/**
 * What an agent sees as `lastError` (docs/design/notifications.md#attempts): the status, `timeout`, or
 * `connection failed` — never an address, a DNS answer or a TLS or socket message (those go to
 * the service's debug log).
 */
export type PublicAttemptError = `HTTP ${number}` | "timeout" | "connection failed";

/** Outcome of one attempt. */
export interface AttemptOutcome {
  /** `ok`: a 2xx answer read to its end (or its first ANSWER_MAX_BYTES) within the deadline. */
  kind: "ok" | "status" | "timeout" | "failed" | "aborted";
  /** The answer's status, 0 when none arrived. */
  statusCode: number;
  /** For the service's log only (may name addresses). */
  detail: string;
  /** How long the attempt took, ms. */
  ms: number;
}

/** The `lastError` shown for an outcome ("" for a success or an attempt aborted by shutdown). */
export function publicError(o: Pick<AttemptOutcome, "kind" | "statusCode">): PublicAttemptError | "" {
  if (o.kind === "status") return `HTTP ${o.statusCode}`;
  if (o.kind === "timeout") return "timeout";
  if (o.kind === "failed") return "connection failed";
  return "";
}

/** An endpoint picked by a claim, locked: what its materialisation reads (store/cursor.ts). */
interface Picked extends CursorHook {
  window_full: boolean;
  slow: boolean;
  agent_id: string;
  /** How many of its agent's endpoints are leased now (in flight on some replica). */
  agent_leased: number;
  /** Since when its work has waited: its `next_due_at`, or when its next feed event was recorded. */
  waiting_since: Date;
}

/** An endpoint claimed for one attempt and its oldest due delivery. */
interface Claimed {
  seq: string;
  id: string;
  webhook_id: string;
  body: string;
  attempts: number;
  event_id: string;
  /** A ping or a redelivery of a finished delivery: tried once, never retried (docs/design/notifications.md#ping-redelivery-and-secret-rotation). */
  single_attempt: boolean;
  url: string;
  secret: string;
  /** The secret a rotation replaced while its overlap window lasts (docs/design/notifications.md#ping-redelivery-and-secret-rotation), else null. */
  previous_secret: string | null;
  agent_id: string;
  /** The endpoint counted as slow when claimed (its share of the pool). */
  slow: boolean;
  /** When the delivery was due before the claim leased it: a batch is sent in (due_at, seq) order. */
  due_at: Date;
}

/** One attempt of a batch and how it went. */
interface Sent {
  d: Claimed;
  a: AttemptOutcome;
}

/**
 * A batch of one endpoint whose attempts all succeeded, quickly but maybe for the last (`slow`),
 * to record: `unsent` is the rest of the batch (due again at once); with `chain` the endpoint's
 * next due deliveries are claimed under its lease.
 */
interface Success {
  sent: Sent[];
  unsent: Claimed[];
  chain: boolean;
  slow: boolean;
}

/**
 * At most this many endpoints' successes are recorded by one statement, in one transaction
 * (docs/design/notifications.md#batches): an event queues a delivery for every subscribed
 * endpoint at once, and their answers come back together.
 */
const SUCCESS_BATCH = 64;

/**
 * The webhook delivery worker (Standard Webhooks "Retries"; docs/design/notifications.md#attempts). Work is claimed per endpoint: an endpoint
 * whose next delivery is due (`webhooks.next_due_at`) and that no attempt holds is leased
 * (`lease_until`: attempt deadline + 10 s) with `FOR UPDATE SKIP LOCKED`, so at most one attempt
 * per endpoint is in flight across every replica; its oldest due deliveries (DELIVERY_BATCH) are
 * sent one after another and recorded together (docs/design/notifications.md#batches). Up to `concurrency` endpoints are
 * served at once, each started as soon as a slot frees (no endpoint waits for another's slowest
 * attempt; after quick successes an endpoint with more due work keeps its slot for up to CHAIN_MAX
 * deliveries in a row); endpoints whose last attempt failed or took over half the deadline (`slow`)
 * hold at most half the slots, so healthy endpoints always have the other half.
 *
 * Each attempt has a hard deadline over the whole exchange (connect, request, status, answer) and
 * reads at most ANSWER_MAX_BYTES of the answer, then closes the connection. A 2xx ends the
 * delivery; a timeout, network error or other status schedules the next attempt after
 * `retrySchedule[attempts − 1]`; past the schedule the delivery fails, the endpoint is disabled (its
 * other queued deliveries fail with it) and its owner gets a `webhook.disabled` inbox item. The
 * body is signed anew with the same `webhook-id` on every attempt. The SSRF guard runs again before
 * each attempt, and the request connects to the address it checked. At least once: a worker that
 * dies mid-attempt leaves a lease that expires, and the attempt is made again.
 */
export class DeliveryWorker {
  private readonly loop: WakeLoop;
  /** Batches in flight, by endpoint. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private slowInFlight = 0;
  private abort = new AbortController();
  private readonly pendingMax: number;
  private readonly livemode: boolean;
  /** Successes of the endpoints in flight, recorded together (`recordSuccesses`). */
  private readonly successes: GroupCommit<Success, Claimed[]>;
  /** Kept-alive connections to the endpoints (docs/design/notifications.md#attempts). */
  private readonly connections = new OutboundConnections();
  /** The last pass found no enabled endpoint at all: a feed event wakes nothing (`feedAdvanced`). */
  private noEndpoints = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: DeliveryOptions,
    private readonly log: Logger,
  ) {
    this.pendingMax = opts.pendingMax ?? DEFAULT_PENDING_MAX;
    this.livemode = opts.livemode ?? true;
    this.successes = new GroupCommit(
      (items) => this.recordSuccesses(items),
      async (item) => (await this.recordSuccesses([item]))[0]!,
      SUCCESS_BATCH,
    );
    const outcomes = { outcome: ["ok", "status", "timeout", "failed", "aborted"] };
    zeroSeries(webhookAttempts, outcomes);
    zeroSeries(webhookAttemptDuration, outcomes);
    this.loop = new WakeLoop(
      () => this.fill(),
      opts.pollMs,
      log,
      "claiming webhook deliveries failed; retrying at the next poll",
    );
  }

  /** True before `start` and from `stop` on. */
  private get stopped(): boolean {
    return this.loop.stopped;
  }

  /** Starts polling (and delivering what is due now). */
  start(): void {
    if (this.abort.signal.aborted) this.abort = new AbortController();
    this.loop.start();
  }

  /** Wakes the worker now (after a commit that queued deliveries, or a freed slot). */
  notify(): void {
    this.noEndpoints = false;
    this.loop.notify();
  }

  /**
   * Wakes the worker after the feed stored an event (its endpoints have something new), unless
   * the last pass found no enabled endpoint at all: then the event is for nobody, and an endpoint
   * registered since — here (`notify`) or on another replica (the safety poll, WEBHOOK_POLL_MS) —
   * starts from the feed's head anyway (docs/design/notifications.md#per-endpoint-feed-cursor).
   */
  feedAdvanced(): void {
    if (!this.noEndpoints) this.loop.notify();
  }

  /**
   * Stops claiming, cuts the attempts in flight (their deliveries are due again at once, the
   * attempt not counted) and waits for them to be recorded.
   */
  async stop(): Promise<void> {
    const claiming = this.loop.stop();
    this.abort.abort();
    await claiming;
    await Promise.all([...this.inFlight.values()]);
    this.connections.close();
  }

  /** Fills the free slots with claimed endpoints until nothing more is due. */
  private async fill(): Promise<void> {
    const slowCap = Math.max(1, Math.floor(this.opts.concurrency / 2));
    for (;;) {
      const free = this.opts.concurrency - this.inFlight.size;
      if (free <= 0 || this.stopped) return;
      const claimed = await this.claim(free, Math.min(free, slowCap - this.slowInFlight));
      for (const batch of claimed) this.launch(batch);
      if (claimed.length < free) return;
    }
  }

  private launch(batch: Claimed[]): void {
    const c = batch[0]!;
    if (c.slow) this.slowInFlight++;
    const run = this.attemptAndRecord(batch)
      .catch((err: unknown) => {
        this.log.warn({ err: String(err), webhookId: c.webhook_id }, "recording a webhook attempt failed");
      })
      .finally(() => {
        this.inFlight.delete(c.webhook_id);
        if (c.slow) this.slowInFlight--;
        this.notify();
      });
    this.inFlight.set(c.webhook_id, run);
  }

  /**
   * Leases up to `slowMax` slow endpoints, then up to `max` in all, each with its oldest due
   * deliveries (DELIVERY_BATCH of a healthy one, one of a slow one), whose `next_attempt_at` moves
   * past the lease: a lost worker's deliveries are due again. One transaction; `SKIP LOCKED` leaves
   * endpoints another replica is claiming or recording. Resolves a batch per endpoint, in order.
   */
  private async claim(max: number, slowMax: number): Promise<Claimed[][]> {
    const lease = this.opts.attemptTimeoutMs + LEASE_MARGIN_MS;
    const busy = [...this.inFlight.keys()];
    return withTransaction(this.pool, async (tx) => {
      const free = `slow = $1 AND (lease_until IS NULL OR lease_until <= now()) AND id <> ALL($3::text[])`;
      // each with how many of its agent's endpoints are in flight on any replica (index webhooks_agent;
      // at most MAX_WEBHOOKS_PER_AGENT rows): an agent's endpoints share SLOTS_PER_AGENT slots
      const cols = `id, events, feed_cursor::text, window_full, slow, agent_id,
        (SELECT count(*)::int FROM webhooks o WHERE o.agent_id = w.agent_id AND o.lease_until > now()) AS agent_leased`;
      let head: bigint | undefined;
      // Endpoints take turns by how long their work has waited (docs/design/notifications.md#batches): those with a
      // delivery due (a retry, a ping, a redelivery, a window being worked off) since `next_due_at`,
      // those behind the feed's head with room in their window and nothing queued since their next
      // feed event was recorded. Up to n of each are read (the second set least advanced first),
      // merged by that time, and the n that waited longest taken: a busy set of endpoints whose
      // turns keep ending with more to do cannot starve the ones that had caught up.
      // ORDER BY names the table's columns (`w.`): a bare `feed_cursor` would be the select list's
      // `feed_cursor::text` and sort as text ("99" after "100"), leaving an endpoint whose cursor
      // has fewer digits than the others' out of every claim until they caught up (docs/design/notifications.md#claims-leases-and-the-pool)
      const pick = async (slow: boolean, n: number): Promise<Picked[]> => {
        if (n <= 0) return [];
        const due = await tx.query<Picked>(
          `SELECT ${cols}, next_due_at AS waiting_since FROM webhooks w
           WHERE disabled_at IS NULL AND next_due_at <= now() AND ${free}
           ORDER BY next_due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [slow, n, busy],
        );
        head ??= await feedHead(tx);
        const behind = await tx.query<Picked>(
          `SELECT ${cols}, coalesce((SELECT f.recorded_at FROM feed_events f WHERE f.seq > w.feed_cursor ORDER BY f.seq LIMIT 1), now()) AS waiting_since
           FROM webhooks w
           WHERE disabled_at IS NULL AND NOT window_full AND feed_cursor < $4 AND ${free} AND id <> ALL($5::text[])
           ORDER BY w.slow, w.feed_cursor LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [slow, n, busy, head.toString(), due.rows.map((r) => r.id)],
        );
        const picked: Picked[] = [];
        for (const p of [...due.rows, ...behind.rows].sort(
          (x, y) => x.waiting_since.getTime() - y.waiting_since.getTime(),
        )) {
          const taken = perAgent.get(p.agent_id) ?? p.agent_leased;
          if (taken >= slotsPerAgent) continue;
          perAgent.set(p.agent_id, taken + 1);
          picked.push(p);
          if (picked.length === n) break;
        }
        return picked;
      };
      // endpoints of one agent taken in this claim, with those already in flight (the filter above)
      const perAgent = new Map<string, number>();
      const slotsPerAgent = this.opts.slotsPerAgent ?? SLOTS_PER_AGENT;
      const slow = await pick(true, slowMax);
      const healthy = await pick(false, max - slow.length);
      const picked = [...slow, ...healthy];
      if (picked.length === 0) {
        const any = await tx.query("SELECT 1 FROM webhooks WHERE disabled_at IS NULL LIMIT 1");
        this.noEndpoints = any.rowCount === 0;
        return [];
      }
      this.noEndpoints = false;
      const take = (hooks: Picked[]) =>
        tx
          .query<Claimed>(
            `UPDATE webhook_deliveries d SET next_attempt_at = now() + ($3::int * interval '1 millisecond')
             FROM (SELECT x.seq, x.due_at FROM unnest($1::text[], $2::int[]) AS e(id, n) CROSS JOIN LATERAL (
                     SELECT seq, next_attempt_at AS due_at FROM webhook_deliveries
                     WHERE webhook_id = e.id AND status = 'pending' AND next_attempt_at <= now()
                     ORDER BY next_attempt_at, seq LIMIT e.n) x) due,
                  webhooks w
             WHERE d.seq = due.seq AND w.id = d.webhook_id
             RETURNING ${CLAIMED}, w.slow, due.due_at`,
            [hooks.map((p) => p.id), hooks.map((p) => (p.slow ? 1 : DELIVERY_BATCH)), lease],
          )
          .then((r) => batches(r.rows));
      // their next feed events are queued first (store/cursor.ts, docs/design/notifications.md#per-endpoint-feed-cursor): an endpoint with
      // retries due still gets its new events (up to its window), then each is taken like before
      head ??= await feedHead(tx);
      await materialise(
        tx,
        picked.filter((p) => !p.window_full),
        head,
        this.pendingMax,
        this.livemode,
      );
      const claimed = await take(picked);
      const got = claimed.map((b) => b[0]!.webhook_id);
      await tx.query(
        "UPDATE webhooks SET lease_until = now() + ($2::int * interval '1 millisecond') WHERE id = ANY($1::text[])",
        [got, lease],
      );
      // claimed with nothing due (a stale next_due_at, nothing new in the feed): set it right, lease nothing
      const idle = picked.map((p) => p.id).filter((id) => !got.includes(id));
      if (idle.length > 0) await tx.query(`UPDATE webhooks w SET ${NEXT_DUE} WHERE id = ANY($1::text[])`, [idle]);
      return claimed;
    });
  }

  /**
   * Sends `first` (one endpoint's batch) one delivery after another, stopping at the first attempt
   * that is not a quick success (or at `stop`), records the batch, and goes on with the endpoint's
   * next batch while they go quickly (CHAIN_MAX deliveries in a row).
   */
  private async attemptAndRecord(first: Claimed[]): Promise<void> {
    let batch = first;
    for (let n = 0; batch.length > 0;) {
      const sent: Sent[] = [];
      for (const d of batch) {
        const a = await this.attempt(d);
        sent.push({ d, a });
        if (!this.quick(a) || this.stopped) break;
      }
      n += sent.length;
      batch = await this.record(sent, batch.slice(sent.length), n < CHAIN_MAX && !this.stopped);
    }
  }

  /**
   * A 2xx within `quickMs` (QUICK_MS), at most half the deadline: the endpoint is healthy (else it
   * counts as `slow`, docs/design/notifications.md#fair-shares).
   */
  private quick(a: AttemptOutcome): boolean {
    return a.kind === "ok" && a.ms <= Math.min(this.opts.quickMs ?? QUICK_MS, this.opts.attemptTimeoutMs / 2);
  }

  /** One attempt of `d` (the SSRF guard first); never rejects. */
  private async attempt(d: Claimed): Promise<AttemptOutcome> {
    const t0 = Date.now();
    let outcome: AttemptOutcome;
    try {
      const target = await checkTarget(d.url, this.opts.policy);
      outcome = await this.post(target, d);
    } catch (err) {
      outcome = { kind: "failed", statusCode: 0, detail: (err as Error).message.slice(0, 500), ms: Date.now() - t0 };
    }
    webhookAttempts.inc({ outcome: outcome.kind });
    webhookAttemptDuration.observe({ outcome: outcome.kind }, outcome.ms / 1000);
    if (outcome.kind === "ok") webhookDeliveryLag.observe(Math.max(0, Date.now() - d.due_at.getTime()) / 1000);
    if (outcome.kind !== "ok" && outcome.kind !== "aborted")
      this.log.debug(
        { webhookId: d.webhook_id, deliveryId: d.id, kind: outcome.kind, detail: outcome.detail, ms: outcome.ms },
        "webhook attempt failed",
      );
    return outcome;
  }

  /**
   * One signed attempt of `d` to the checked target (see `sendAttempt`): signed with the endpoint's
   * secret and, within a rotation's overlap window, with the previous one too (docs/design/notifications.md#ping-redelivery-and-secret-rotation).
   */
  private post(target: CheckedTarget, d: Claimed): Promise<AttemptOutcome> {
    const secrets = d.previous_secret ? [d.secret, d.previous_secret] : [d.secret];
    const headers = signedHeaders(secrets, d.id, Math.floor(Date.now() / 1000), d.body);
    return sendAttempt(target, d.body, headers, this.opts.attemptTimeoutMs, this.abort.signal, this.connections);
  }

  /**
   * Records a batch of one endpoint (`sent` in order, then `unsent`, the rest of the batch) and
   * releases the endpoint's lease, in one transaction that first locks the endpoint row (so a
   * delivery queued meanwhile is seen by the `next_due_at` it sets): the successes end their
   * deliveries; the unsent ones are due again at once; a failed last attempt schedules its
   * delivery's next attempt, or gives up and disables the endpoint; one cut by `stop` only makes
   * its delivery due again. With `chain`, a batch of quick successes keeps the lease for the
   * endpoint's next due deliveries, which it resolves (claimed as `claim` would); otherwise [].
   */
  private async record(sent: Sent[], unsent: Claimed[], chain: boolean): Promise<Claimed[]> {
    const { d, a } = sent.at(-1)!;
    const done = sent.filter((x) => x.a.kind === "ok");
    const attempts = d.attempts + 1;
    const error = publicError(a);
    const slow = !this.quick(a);
    // the last attempt succeeded, so every one before it did: recorded with other endpoints' successes
    if (a.kind === "ok") return this.successes.submit({ sent, unsent, chain: chain && !slow, slow });
    let disabled = false;
    const next = await withTransaction(this.pool, async (tx): Promise<Claimed[]> => {
      const hook = await tx.query("SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE", [d.webhook_id]);
      if (hook.rowCount === 0) return []; // deleted meanwhile, with its deliveries
      if (unsent.length > 0)
        await tx.query(
          "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE seq = ANY($1::bigint[]) AND status = 'pending'",
          [unsent.map((u) => u.seq)],
        );
      if (done.length > 0) await tx.query(succeeded(1), outcomeParams(done));
      if (a.kind === "aborted") {
        await tx.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE seq = $1 AND status = 'pending'", [
          d.seq,
        ]);
      } else {
        const delay = this.opts.retrySchedule[attempts - 1];
        if (d.single_attempt) {
          // a ping or a redelivery (docs/design/notifications.md#ping-redelivery-and-secret-rotation): one attempt, its failure recorded, no retry,
          // and never the endpoint's give-up
          await tx.query(
            `UPDATE webhook_deliveries SET status = 'failed', attempts = $2, last_status_code = $3, last_error = $4,
                    next_attempt_at = NULL WHERE seq = $1 AND status = 'pending'`,
            [d.seq, attempts, a.statusCode || null, error],
          );
        } else if (delay !== undefined) {
          // `status = 'pending'`: a delivery another attempt's give-up failed ("endpoint disabled")
          // stays failed — nothing is retried for a disabled endpoint.
          await tx.query(
            `UPDATE webhook_deliveries SET attempts = $2, last_status_code = $3, last_error = $4,
                    next_attempt_at = now() + ($5::int * interval '1 millisecond') WHERE seq = $1 AND status = 'pending'`,
            [d.seq, attempts, a.statusCode || null, error, delay],
          );
        } else {
          await this.giveUp(tx, d, attempts, a.statusCode, error);
          disabled = true;
          return [];
        }
      }
      await tx.query(
        `UPDATE webhooks w SET lease_until = NULL, slow = CASE WHEN $2 THEN w.slow ELSE $3 END, window_full = false, ${NEXT_DUE}
         WHERE id = $1`,
        [d.webhook_id, a.kind === "aborted", slow],
      );
      return [];
    });
    if (disabled) {
      webhookEndpointsDisabled.inc();
      this.log.warn({ webhookId: d.webhook_id, deliveryId: d.id }, "webhook disabled after its last retry failed");
    }
    return next;
  }

  /**
   * The success path of `record` for several endpoints at once (the hot path: one delivery per
   * event and endpoint, docs/design/notifications.md#batches), in one transaction: the endpoints'
   * rows locked in id order (replicas recording at once never deadlock; an endpoint deleted
   * meanwhile is left out and answers []), their unsent deliveries due again, then one statement
   * (RECORD_SUCCESSES): every delivery sent succeeded; an endpoint with `chain` claims its next due
   * deliveries (up to DELIVERY_BATCH) under the same lease, resolved per item in order; the others
   * (or when none is due) release the lease and set `next_due_at` from their other pending deliveries.
   */
  private async recordSuccesses(items: Success[]): Promise<Claimed[][]> {
    const lease = this.opts.attemptTimeoutMs + LEASE_MARGIN_MS;
    const hookOf = (x: Success) => x.sent[0]!.d.webhook_id;
    return withTransaction(this.pool, async (tx) => {
      const ids = [...new Set(items.map(hookOf))].sort();
      const locked = await tx.query<{ id: string }>(
        "SELECT id FROM webhooks WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
        [ids],
      );
      const present = new Set(locked.rows.map((r) => r.id));
      const live = items.filter((x) => present.has(hookOf(x)));
      if (live.length === 0) return items.map(() => []);
      const unsent = live.flatMap((x) => x.unsent.map((u) => u.seq));
      if (unsent.length > 0)
        await tx.query(
          "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE seq = ANY($1::bigint[]) AND status = 'pending'",
          [unsent],
        );
      const r = await tx.query<Claimed>(RECORD_SUCCESSES, [
        ...outcomeParams(live.flatMap((x) => x.sent)),
        live.map(hookOf),
        live.map((x) => x.chain),
        live.map((x) => x.slow),
        lease,
        DELIVERY_BATCH,
      ]);
      const next = new Map(batches(r.rows).map((b) => [b[0]!.webhook_id, b]));
      return items.map((x) => next.get(hookOf(x)) ?? []);
    });
  }

  /** Fails `d` for good, disables its endpoint and every pending delivery of it, tells the owner. */
  private async giveUp(tx: Tx, d: Claimed, attempts: number, statusCode: number, error: string): Promise<void> {
    await tx.query(
      `UPDATE webhook_deliveries SET status = 'failed', attempts = $2, last_status_code = $3, last_error = $4,
              next_attempt_at = NULL WHERE seq = $1`,
      [d.seq, attempts, statusCode || null, error],
    );
    const reason = `delivery ${d.id} failed ${attempts} times; last error: ${error}`;
    const off = await tx.query(
      `UPDATE webhooks SET disabled_at = now(), disabled_reason = $2, lease_until = NULL, next_due_at = NULL
       WHERE id = $1 AND disabled_at IS NULL`,
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
  }
}

/**
 * One POST of `body` with `signed` (the Standard Webhooks headers) to the checked address (TLS
 * still verifies the URL's host name), on a connection of `connections` kept for that address (a
 * fresh one without it), under a hard deadline of
 * `deadlineMs` over the whole exchange (docs/design/notifications.md#attempts): it ends at the answer's
 * end, after ANSWER_MAX_BYTES of answer (the connection is then closed), at the deadline
 * (`timeout`, whatever arrived so far) or when `signal` aborts (`aborted`). Never rejects.
 */
export async function sendAttempt(
  target: CheckedTarget,
  body: string,
  signed: Record<string, string>,
  deadlineMs: number,
  signal: AbortSignal,
  connections?: OutboundConnections,
): Promise<AttemptOutcome> {
  const headers = { ...signed, "content-type": "application/json", "user-agent": "APS-Webhooks/1" };
  const o = await outboundRequest(
    target,
    {
      method: "POST",
      headers,
      body,
      deadlineMs,
      maxBytes: ANSWER_MAX_BYTES,
      signal,
    },
    connections,
  );
  return { kind: o.kind, statusCode: o.statusCode, detail: o.detail, ms: o.ms };
}

/**
 * SQL select list of `webhooks w`'s signing secrets: `secret`, and `previous_secret` while its
 * overlap window lasts (NULL after it; docs/design/notifications.md#ping-redelivery-and-secret-rotation).
 */
const SECRETS = `w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END AS previous_secret`;

/**
 * SQL expression of `webhooks w`'s next due time: the earliest due time of its pending deliveries
 * other than `exclude` (an SQL expression of a delivery `seq`, or NULL), never before now (an
 * endpoint with a backlog goes behind those that waited longer: endpoints take turns); with none
 * pending, now() when its cursor is behind the feed's head (more events to queue: it takes its
 * turn in the same order, docs/design/notifications.md#per-endpoint-feed-cursor), else NULL. Read through `webhook_deliveries_endpoint_due`
 * and one backward step on the feed's primary key.
 */
function nextDue(exclude: string): string {
  return `(SELECT CASE WHEN min(next_attempt_at) IS NOT NULL THEN greatest(min(next_attempt_at), now())
                       WHEN w.feed_cursor < (SELECT coalesce(max(seq), 0) FROM feed_events) THEN now() END
           FROM webhook_deliveries WHERE webhook_id = w.id AND status = 'pending' AND seq <> ALL(${exclude}))`;
}

/** SQL `SET` clause for `webhooks w`: `next_due_at` from its pending deliveries (nextDue). */
const NEXT_DUE = `next_due_at = ${nextDue("'{}'::bigint[]")}`;

/** SQL select list of a claimed delivery (`Claimed` but `slow` and `due_at`) of `webhook_deliveries d`, `webhooks w`. */
const CLAIMED = `d.seq::text, d.id, d.webhook_id, d.body, d.attempts, d.event_id, d.single_attempt, w.url, ${SECRETS}, w.agent_id`;

/**
 * SQL statement ending the deliveries of a batch that succeeded; its parameters from `$first` on
 * are `outcomeParams` (their `seq`s, attempt counts and statuses).
 */
function succeeded(first: number): string {
  const [seq, attempts, code] = [first, first + 1, first + 2].map((k) => `$${k}`);
  return `UPDATE webhook_deliveries d SET status = 'succeeded', attempts = o.attempts, last_status_code = o.code,
            last_error = NULL, delivered_at = now(), next_attempt_at = NULL
          FROM unnest(${seq}::bigint[], ${attempts}::int[], ${code}::int[]) AS o(seq, attempts, code)
          WHERE d.seq = o.seq`;
}

/**
 * SQL recording the successes of several endpoints (DeliveryWorker `recordSuccesses`): `$1`–`$3`
 * the deliveries sent (`outcomeParams`), `$4`–`$6` per endpoint its id, whether it chains and
 * whether its last attempt was slow, `$7` the lease (ms), `$8` DELIVERY_BATCH. Its CTEs share one
 * snapshot, in which the deliveries sent are still pending: they are left out by `seq`.
 */
const RECORD_SUCCESSES = `
  WITH done AS (${succeeded(1)}),
  e AS (SELECT * FROM unnest($4::text[], $5::boolean[], $6::boolean[]) AS e(id, chain, slow)),
  nxt AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + ($7::int * interval '1 millisecond')
    FROM e CROSS JOIN LATERAL (
           SELECT seq, next_attempt_at AS due_at FROM webhook_deliveries
           WHERE e.chain AND webhook_id = e.id AND status = 'pending' AND next_attempt_at <= now() AND seq <> ALL($1::bigint[])
           ORDER BY next_attempt_at, seq LIMIT $8) due
         JOIN webhooks w ON w.id = e.id
    WHERE w.disabled_at IS NULL AND d.seq = due.seq
    RETURNING ${CLAIMED}, false AS slow, due.due_at),
  hook AS (
    UPDATE webhooks w SET window_full = false,
           lease_until = CASE WHEN EXISTS (SELECT 1 FROM nxt WHERE nxt.webhook_id = w.id)
                              THEN now() + ($7::int * interval '1 millisecond') END,
           slow = CASE WHEN EXISTS (SELECT 1 FROM nxt WHERE nxt.webhook_id = w.id) THEN false ELSE e.slow END,
           next_due_at = CASE WHEN EXISTS (SELECT 1 FROM nxt WHERE nxt.webhook_id = w.id) THEN w.next_due_at
                              ELSE ${nextDue("$1::bigint[]")} END
    FROM e WHERE w.id = e.id)
  SELECT * FROM nxt`;

/** The parameters of `succeeded` for `done`: `seq`s, attempt counts (this one included), statuses. */
function outcomeParams(done: Sent[]): [string[], number[], number[]] {
  return [done.map((x) => x.d.seq), done.map((x) => x.d.attempts + 1), done.map((x) => x.a.statusCode)];
}

/** Claimed deliveries grouped by endpoint, each batch in (due_at, seq) order, endpoints in first-row order. */
function batches(rows: Claimed[]): Claimed[][] {
  const by = new Map<string, Claimed[]>();
  for (const r of rows) {
    const batch = by.get(r.webhook_id);
    if (batch) batch.push(r);
    else by.set(r.webhook_id, [r]);
  }
  const order = (x: Claimed, y: Claimed) =>
    x.due_at.getTime() - y.due_at.getTime() ||
    (BigInt(x.seq) < BigInt(y.seq) ? -1 : BigInt(x.seq) > BigInt(y.seq) ? 1 : 0);
  return [...by.values()].map((b) => b.sort(order));
}
