import { webhookAttempts, webhookDeliveryLag } from "@aps/platform";
import { eventually } from "@aps/testkit";
import { DELIVERY_BATCH } from "./worker.js";
import { addEndpoint, describeOnPostgres, queueDeliveries, testWorker, useWebhookTestStore } from "./worker.fixture.js";

/**
 * Batches of one endpoint (docs/design/notifications.md#batches), on the real PostgreSQL: a healthy endpoint's due
 * deliveries go out DELIVERY_BATCH at a time, in order, and each batch's outcomes are recorded in
 * one transaction (its deliveries share `delivered_at`, the transaction's time); a batch stops at
 * its first failure, the deliveries before it succeeded once, the failed one is retried and the
 * rest of the batch is sent later, each once; the successes of several endpoints answered together are
 * recorded in one transaction.
 */
describeOnPostgres("batch.test.ts", "webhook delivery batches", () => {
  const suite = useWebhookTestStore("notifications-batch-test");
  const pool = () => suite.store.db.pool;
  const receivers = suite.receivers;

  /** The worker's counters so far: attempts answered 2xx (`ok`) and with another status, and lags observed. */
  async function attemptCounts(): Promise<{ ok: number; status: number; lag: number }> {
    const attempts = (await webhookAttempts.get()).values;
    const of = (outcome: string) => attempts.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    const lag = (await webhookDeliveryLag.get()).values.find(
      (v) => v.metricName === "aps_webhook_delivery_lag_seconds_count",
    );
    return { ok: of("ok"), status: of("status"), lag: lag?.value ?? 0 };
  }

  /** A receiver answering 204, or 500 to the first attempt of the ids in `failOnce`; records each webhook-id. */
  async function receiver(failOnce: Set<string>) {
    const ids: string[] = [];
    const url = await receivers.onEnd((req, res) => {
      const id = String(req.headers["webhook-id"]);
      ids.push(id);
      if (failOnce.delete(id)) res.writeHead(500).end();
      else res.writeHead(204).end();
    });
    return { url, ids };
  }

  /** Registers endpoint `hook` at `url` with `n` due deliveries `msg_<hook>_<i>`, oldest first. */
  async function queue(hook: string, url: string, n: number): Promise<string[]> {
    await addEndpoint(pool(), hook, url);
    const ids = [...Array(n).keys()].map((i) => `msg_${hook}_${i}`);
    await queueDeliveries(pool(), hook, ids);
    return ids;
  }

  /** A delivery worker on the test's database with `concurrency` slots (retries after 100 ms). */
  const worker = (concurrency = 2) => testWorker(pool(), suite.store.log, { concurrency });

  /** Each delivery's status, attempts and `delivered_at` (ms), by id. */
  async function outcomes(hook: string) {
    const r = await pool().query<{ id: string; status: string; attempts: number; at: string | null }>(
      `SELECT id, status, attempts, (extract(epoch FROM delivered_at) * 1000)::text AS at
       FROM webhook_deliveries WHERE webhook_id = $1`,
      [hook],
    );
    return new Map(r.rows.map((x) => [x.id, x]));
  }

  it(`a healthy endpoint's deliveries go out in order, ${DELIVERY_BATCH} recorded per transaction`, async () => {
    const n = 2 * DELIVERY_BATCH;
    const rx = await receiver(new Set());
    const ids = await queue("wh_ok", rx.url, n);
    const w = worker();
    w.start();
    try {
      await eventually(
        async () =>
          expect([...(await outcomes("wh_ok")).values()].map((o) => o.status)).toEqual(Array(n).fill("succeeded")),
        10_000,
        50,
      );
    } finally {
      await w.stop();
    }
    expect(rx.ids).toEqual(ids);
    const o = await outcomes("wh_ok");
    expect(ids.map((id) => o.get(id)!.attempts)).toEqual(Array(n).fill(1));
    // one recording transaction per batch: each batch's deliveries share the transaction's time
    const times = ids.map((id) => o.get(id)!.at);
    expect(new Set(times).size).toBe(2);
    expect(new Set(times.slice(0, DELIVERY_BATCH)).size).toBe(1);
  });

  it("a batch stops at its first failure; the rest is sent later, each once, and the failed one again; the attempts are counted", async () => {
    const failing = "msg_wh_fail_3";
    const rx = await receiver(new Set([failing]));
    const before = await attemptCounts();
    const ids = await queue("wh_fail", rx.url, 12);
    const w = worker();
    w.start();
    try {
      await eventually(
        async () => expect([...(await outcomes("wh_fail")).values()].every((o) => o.status === "succeeded")).toBe(true),
        10_000,
        50,
      );
    } finally {
      await w.stop();
    }
    // the batch's first four in order, the fourth failing; nothing else of the batch was sent then
    expect(rx.ids.slice(0, 4)).toEqual(ids.slice(0, 4));
    expect([...rx.ids].sort()).toEqual([...ids, failing].sort());
    const o = await outcomes("wh_fail");
    expect(ids.map((id) => o.get(id)!.attempts)).toEqual(ids.map((id) => (id === failing ? 2 : 1)));
    // the three before the failure were recorded with it, in one transaction
    expect(new Set(ids.slice(0, 3).map((id) => o.get(id)!.at)).size).toBe(1);
    // aps_webhook_*: 12 answered 2xx (each with its lag), one 500 (docs/observability.md)
    const after = await attemptCounts();
    expect({ ok: after.ok - before.ok, status: after.status - before.status, lag: after.lag - before.lag }).toEqual({
      ok: 12,
      status: 1,
      lag: 12,
    });
  });

  it("the successes of several endpoints answered together are recorded together: fewer transactions than endpoints", async () => {
    await pool().query("UPDATE webhooks SET disabled_at = now()"); // the earlier tests' endpoints
    const hooks = ["wh_g1", "wh_g2", "wh_g3", "wh_g4", "wh_g5", "wh_g6"];
    // the receiver holds every answer until each endpoint's delivery has arrived, then answers them all
    const held: (() => void)[] = [];
    const url = await receivers.onEnd((_req, res) => {
      held.push(() => res.writeHead(204).end());
      if (held.length === hooks.length) for (const answer of held) answer();
    });
    for (const hook of hooks) {
      await queue(hook, url, 1);
      // one owner each: an agent's endpoints share SLOTS_PER_AGENT slots
      await pool().query("UPDATE webhooks SET agent_id = $2 WHERE id = $1", [hook, `ag_${hook}`]);
    }
    const w = worker(hooks.length);
    w.start();
    const delivered = async () =>
      (
        await pool().query<{ webhook_id: string; status: string; at: string | null; lease: boolean; due: boolean }>(
          `SELECT d.webhook_id, d.status, (extract(epoch FROM d.delivered_at) * 1000)::text AS at,
                  w.lease_until IS NOT NULL AS lease, w.next_due_at IS NOT NULL AS due
           FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.webhook_id = ANY($1::text[])`,
          [hooks],
        )
      ).rows;
    try {
      await eventually(
        async () => expect((await delivered()).map((r) => r.status)).toEqual(hooks.map(() => "succeeded")),
        10_000,
        50,
      );
    } finally {
      await w.stop();
    }
    const rows = await delivered();
    // each endpoint's lease released and nothing left due, as when recorded alone
    expect(rows.map((r) => [r.webhook_id, r.lease, r.due]).sort()).toEqual(hooks.map((h) => [h, false, false]));
    // recorded alone, each endpoint's success would have its own transaction time
    expect(new Set(rows.map((r) => r.at)).size).toBeLessThan(hooks.length);
  });

  it("endpoints take turns by how long their work waited: one that had caught up is not starved by busy ones", async () => {
    await pool().query("UPDATE webhooks SET disabled_at = now()"); // the earlier tests' endpoints
    const arrivals: string[] = [];
    const base = await receivers.onEnd((req, res) => {
      arrivals.push(String(req.url).split("/").at(-1)!);
      res.writeHead(204).end();
    });
    // three public events recorded 10 s ago
    await pool().query(
      `INSERT INTO feed_events (event_id, type, occurred_at, recorded_at, data)
       SELECT 'ev_turn_' || i, 'post.created', now() - interval '10 s', now() - interval '10 s', '{}'::jsonb FROM generate_series(1, 3) i`,
    );
    // busy endpoints: 40 deliveries each due for 1 s, their cursors at the feed's head
    for (const hook of ["busy_a", "busy_b"]) {
      await queue(hook, `${base}/${hook}`, 40);
      await pool().query(
        "UPDATE webhooks SET feed_cursor = (SELECT max(seq) FROM feed_events), next_due_at = now() - interval '1 s' WHERE id = $1",
        [hook],
      );
    }
    // an endpoint that had caught up: nothing queued, its cursor before the three events
    await addEndpoint(pool(), "caught_up", `${base}/caught_up`);
    await pool().query(
      "UPDATE webhooks SET feed_cursor = (SELECT min(seq) - 1 FROM feed_events) WHERE id = 'caught_up'",
    );
    const w = worker(1);
    w.start();
    try {
      await eventually(async () => expect(arrivals.length).toBe(83), 10_000, 50);
    } finally {
      await w.stop();
    }
    // its events waited longest (10 s): its batch goes first, before the busy endpoints' 80
    expect(arrivals.slice(0, 3)).toEqual(["caught_up", "caught_up", "caught_up"]);
  });
});
