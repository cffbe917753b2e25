import type pg from "pg";
import { context, ROOT_CONTEXT } from "@opentelemetry/api";
import { Counter } from "prom-client";
import { z } from "zod";
import { intVar } from "./config.js";
import type { Logger } from "./log.js";
import { metricsRegistry, zeroSeries } from "./metrics.js";

/**
 * Bounded storage (docs/design/operations.md#retention, docs/retention.md): every table that only grows
 * has a rule here or in its service's template, and one job per service process enforces them by
 * batched deletes on an interval.
 */

/** One table's retention rule: rows whose `column` is older than `olderThanMs` (and match `where`) are deleted. */
export interface RetentionRule {
  /** Table in the service's schema (also the metric label and the advisory-lock key). */
  table: string;
  /** Time column compared with the cutoff; an index on it (or a partial index matching `where`) keeps each batch cheap. */
  column: string;
  /** `timestamptz` (default) or `date` (a UTC day: rows of days before the cutoff's day go). */
  columnType?: "timestamptz" | "date";
  /** Age past which a row goes, ms (now − olderThanMs is the cutoff). */
  olderThanMs: number;
  /**
   * Further SQL condition on the row, the table aliased `t` (e.g. `t.published_at IS NOT NULL`);
   * `$1` may be used for the cutoff (timestamptz). Trusted text from code, never from input.
   */
  where?: string;
  /** Rows per delete (default RETENTION_BATCH_SIZE). */
  batchSize?: number;
}

/** Rows a pass deleted per table, and the tables another replica was pruning at that moment (skipped). */
export interface RetentionPass {
  pruned: Record<string, number>;
  skipped: string[];
}

const RETENTION_LOCK_PREFIX = "aps-retention:";

/** `aps_retention_pruned_rows_total{service,table}`: rows deleted by the retention job (docs/design/operations.md#retention). */
export const retentionPrunedRows = new Counter({
  name: "aps_retention_pruned_rows_total",
  help: "Rows deleted by the retention job (docs/retention.md), per service and table.",
  labelNames: ["service", "table"] as const,
  registers: [metricsRegistry],
});

/** `aps_retention_failures_total{service,table}`: prune batches that failed (retried on the next pass). */
export const retentionFailures = new Counter({
  name: "aps_retention_failures_total",
  help: "Retention batches that failed, per service and table (retried on the next pass).",
  labelNames: ["service", "table"] as const,
  registers: [metricsRegistry],
});

/**
 * Deletes `rule`'s rows older than `now − olderThanMs`, `batchSize` rows per transaction, until a
 * batch comes back short. Each batch is one transaction that first takes
 * `pg_try_advisory_xact_lock` on (schema, table): when another replica holds it, this call stops
 * and reports `busy` (that replica is pruning the table). Transaction-scoped, so it works behind
 * PgBouncer in transaction mode. Rows are picked by `ctid` under the time index, so a batch never
 * scans the table. Resolves the rows deleted; rejects on a database error (rows deleted by earlier
 * batches stay deleted).
 */
export async function pruneTable(
  pool: pg.Pool,
  rule: RetentionRule,
  now: Date = new Date(),
  defaultBatchSize = DEFAULT_BATCH_SIZE,
): Promise<{ deleted: number; busy: boolean }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(rule.table) || !/^[a-z_][a-z0-9_]*$/.test(rule.column))
    throw new Error(`bad retention rule ${rule.table}.${rule.column}`);
  const cutoff = new Date(now.getTime() - rule.olderThanMs);
  const limit = rule.batchSize ?? defaultBatchSize;
  const col =
    rule.columnType === "date"
      ? `t.${rule.column} < ($1::timestamptz AT TIME ZONE 'UTC')::date`
      : `t.${rule.column} < $1`;
  const cond = rule.where ? `${col} AND (${rule.where})` : col;
  const sql = `DELETE FROM ${rule.table} WHERE ctid = ANY(ARRAY(SELECT t.ctid FROM ${rule.table} t WHERE ${cond} LIMIT $2))`;
  let deleted = 0;
  for (;;) {
    const client = await pool.connect();
    let n: number;
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      const lock = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtextextended($1 || current_schema() || '.' || $2, 0)) AS ok",
        [RETENTION_LOCK_PREFIX, rule.table],
      );
      if (!lock.rows[0]?.ok) {
        await client.query("ROLLBACK");
        return { deleted, busy: true };
      }
      const r = await client.query(sql, [cutoff, limit]);
      await client.query("COMMIT");
      n = r.rowCount ?? 0;
    } catch (err) {
      broken = err instanceof Error ? err : new Error(String(err));
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release(broken);
    }
    deleted += n;
    if (n < limit) return { deleted, busy: false };
  }
}

/** Default rows per delete batch. */
export const DEFAULT_BATCH_SIZE = 1_000;

/** Options of a RetentionJob. */
export interface RetentionJobOptions {
  /** Mean pause between passes, ms (RETENTION_INTERVAL_MS); each pause is drawn from ±20 % of it. */
  intervalMs: number;
  /** Rows per delete batch when a rule sets none (RETENTION_BATCH_SIZE). */
  batchSize?: number;
  /** Label `service` of the metrics. */
  service: string;
}

/**
 * Runs `rules` on one service's pool every `intervalMs` (± 20 % jitter, so replicas started
 * together drift apart; the first pass after a jittered fraction of the interval, at most 60 s).
 * Safe with N replicas: a table is pruned by one replica at a time (an advisory lock per table and
 * batch, see pruneTable), and the deletes are idempotent anyway. A failed table is logged, counted
 * in `aps_retention_failures_total` and retried on the next pass; other tables go on.
 */
export class RetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<RetentionPass> | undefined;
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    readonly rules: readonly RetentionRule[],
    private readonly log: Logger,
    private readonly opts: RetentionJobOptions,
  ) {}

  /** Schedules the passes; every rule's series start at 0. */
  start(): void {
    const labels = { service: [this.opts.service], table: this.rules.map((r) => r.table) };
    zeroSeries(retentionPrunedRows, labels);
    zeroSeries(retentionFailures, labels);
    this.schedule(Math.min(this.opts.intervalMs, 60_000) * Math.random());
  }

  /** One pass over every rule now (tests, and each tick); resolves what it deleted. */
  async runOnce(now: Date = new Date()): Promise<RetentionPass> {
    const pass: RetentionPass = { pruned: {}, skipped: [] };
    for (const rule of this.rules) {
      if (this.stopped) break;
      try {
        const r = await pruneTable(this.pool, rule, now, this.opts.batchSize);
        pass.pruned[rule.table] = (pass.pruned[rule.table] ?? 0) + r.deleted;
        if (r.busy) pass.skipped.push(rule.table);
        if (r.deleted > 0) retentionPrunedRows.inc({ service: this.opts.service, table: rule.table }, r.deleted);
      } catch (err) {
        retentionFailures.inc({ service: this.opts.service, table: rule.table });
        this.log.warn({ err: err instanceof Error ? err.message : String(err), table: rule.table }, "retention failed");
      }
    }
    const total = Object.values(pass.pruned).reduce((a, b) => a + b, 0);
    if (total > 0) this.log.info({ pruned: pass.pruned }, "retention pass");
    return pass;
  }

  /** Stops after the pass in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      context.bind(ROOT_CONTEXT, () => {
        this.running = this.runOnce().finally(() => {
          this.running = undefined;
          this.schedule(this.opts.intervalMs * (0.8 + 0.4 * Math.random()));
        });
      }),
      ms,
    );
    this.timer.unref();
  }
}

const DURATION = /^(\d+)(ms|s|m|h|d)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration env var: `<n>` ms or `<n>ms|s|m|h|d` (e.g. `30d`, `24h`, `5s`), > 0; ms after parsing. */
export const durationVar = (def: string) =>
  z
    .string()
    .default(def)
    .transform((v, ctx) => {
      const m = DURATION.exec(v.trim());
      const n = m ? Number(m[1]) * UNIT_MS[m[2] ?? "ms"]! : NaN;
      if (!Number.isSafeInteger(n) || n <= 0) {
        ctx.addIssue({ code: "custom", message: "expected a duration like 30d, 24h, 30m, 5s or milliseconds" });
        return z.NEVER;
      }
      return n;
    });

/**
 * The retention env vars every service reads (part of commonEnvSchema; README "Retention",
 * docs/retention.md). One set for all services: each applies the ones naming its tables.
 */
export const retentionEnvSchema = {
  /** Mean pause between retention passes, ms (default 1 h, ± 20 % jitter). */
  RETENTION_INTERVAL_MS: intVar(3_600_000, 100),
  /** Rows per delete batch (default 1 000). */
  RETENTION_BATCH_SIZE: intVar(DEFAULT_BATCH_SIZE, 1),
  /** Published outbox rows (every service), default 24 h. */
  RETENTION_OUTBOX: durationVar("24h"),
  /** Processed-event ids (every consumer's dedup table), default 14 d: must outlive the stream's max age (7 d, docs/design/events.md#stream-retention). */
  RETENTION_PROCESSED_EVENTS: durationVar("14d"),
  /** Idempotency records: keyed writes, HTTP Idempotency-Keys, keyed joins; default 24 h, their documented replay window. */
  RETENTION_IDEMPOTENCY: durationVar("24h"),
  /** Per-day counters of earlier UTC days (posts/comments/flags per day, joins per source, translation quota), default 2 d. */
  RETENTION_DAILY_COUNTERS: durationVar("2d"),
  /** Superseded vote history (a vote_events row with a newer one of the same voter and post), default 90 d. */
  RETENTION_VOTE_HISTORY: durationVar("90d"),
  /** Inbox items, default 90 d. */
  RETENTION_INBOX: durationVar("90d"),
  /** Finished webhook deliveries (succeeded or failed; pending ones stay), default 7 d. */
  RETENTION_DELIVERIES: durationVar("7d"),
  /** Expired leases and penalties (translation generation leases, flag penalties), kept this long past expiry; default 1 d. */
  RETENTION_EXPIRED: durationVar("1d"),
};

/** The parsed retention settings, ms each (see retentionEnvSchema). */
export interface RetentionSettings {
  intervalMs: number;
  batchSize: number;
  outboxMs: number;
  processedEventsMs: number;
  idempotencyMs: number;
  dailyCountersMs: number;
  voteHistoryMs: number;
  inboxMs: number;
  deliveriesMs: number;
  expiredMs: number;
}

/** The parsed retention vars of a service's config. */
export type RetentionConfig = {
  [K in keyof typeof retentionEnvSchema]: z.infer<(typeof retentionEnvSchema)[K]>;
};

/** RetentionSettings from a parsed config (commonEnvSchema includes retentionEnvSchema). */
export function retentionOf(cfg: RetentionConfig): RetentionSettings {
  return {
    intervalMs: cfg.RETENTION_INTERVAL_MS,
    batchSize: cfg.RETENTION_BATCH_SIZE,
    outboxMs: cfg.RETENTION_OUTBOX,
    processedEventsMs: cfg.RETENTION_PROCESSED_EVENTS,
    idempotencyMs: cfg.RETENTION_IDEMPOTENCY,
    dailyCountersMs: cfg.RETENTION_DAILY_COUNTERS,
    voteHistoryMs: cfg.RETENTION_VOTE_HISTORY,
    inboxMs: cfg.RETENTION_INBOX,
    deliveriesMs: cfg.RETENTION_DELIVERIES,
    expiredMs: cfg.RETENTION_EXPIRED,
  };
}

/** The defaults (every var unset). */
export const DEFAULT_RETENTION: RetentionSettings = retentionOf(z.object(retentionEnvSchema).parse({}));

/**
 * The platform's own tables in every service schema: published outbox rows (the relay only reads
 * unpublished ones), processed-event ids (a redelivery can only come from the stream, which
 * keeps an event at most NATS_STREAM_MAX_AGE_S) and keyed-write outcomes (read only within their
 * 24 h window, docs/design/edge.md#idempotency-key).
 */
export function platformRetentionRules(s: RetentionSettings): RetentionRule[] {
  return [
    { table: "outbox", column: "published_at", olderThanMs: s.outboxMs, where: "t.published_at IS NOT NULL" },
    { table: "processed_events", column: "processed_at", olderThanMs: s.processedEventsMs },
    { table: "idempotency_outcomes", column: "created_at", olderThanMs: s.idempotencyMs },
  ];
}
