import { eventually, scaled, waitUntil } from "@aps/testkit";
import {
  addEndpoint,
  describeOnPostgres,
  queueDeliveries,
  TEST_SECRET,
  testWorker,
  useWebhookTestStore,
} from "./worker.fixture.js";

/**
 * Two delivery workers on one database — two replicas of the notifications service (docs/design/notifications.md#attempts), on the real PostgreSQL: every delivery arrives exactly once when nothing
 * fails, never two attempts at once on one endpoint, and a slow endpoint's backlog does not hold
 * the healthy endpoints' deliveries behind it.
 */
describeOnPostgres("replicas.test.ts", "webhook workers of two replicas", () => {
  const suite = useWebhookTestStore("notifications-replicas-test", 2);

  /**
   * A receiver answering 204 `delayMs` after a request — and not before `held` resolves; records
   * each webhook-id, the requests it got and its concurrency.
   */
  async function receiver(delayMs: number, held: Promise<void> = Promise.resolve()) {
    const ids: string[] = [];
    const at = new Map<string, number>();
    let got = 0;
    let open = 0;
    let maxOpen = 0;
    const url = await suite.receivers.listen((req, res) => {
      got++;
      maxOpen = Math.max(maxOpen, ++open);
      req.resume();
      req.on(
        "end",
        () =>
          void held.then(() =>
            setTimeout(() => {
              ids.push(String(req.headers["webhook-id"]));
              at.set(String(req.headers["webhook-id"]), Date.now());
              open--;
              res.writeHead(204).end();
            }, delayMs),
          ),
      );
    });
    return {
      url,
      ids,
      got: () => got,
      maxOpen: () => maxOpen,
      /** When the request of delivery `id` was answered (ms since the epoch). */
      receivedAt: (id: string) => at.get(id) ?? Infinity,
    };
  }

  it("deliver every delivery once, one attempt per endpoint at a time, the slow backlog aside", async () => {
    // the slow endpoint answers nothing until the healthy ones have all their deliveries, then 300 ms each
    let answerSlow!: () => void;
    const slow = await receiver(300, new Promise<void>((r) => (answerSlow = r)));
    const fast = await Promise.all([0, 0, 0].map(() => receiver(0)));
    const hooks = [slow, ...fast].map((r, i) => ({ id: `wh_${i}`, url: r.url }));
    const pool = suite.store.db.pool;
    // each of its own agent (one agent's endpoints share SLOTS_PER_AGENT slots)
    for (const h of hooks) await addEndpoint(pool, h.id, h.url, `${h.id}_owner`);
    // the slow endpoint's 12 deliveries are older than everyone else's 10
    const queue = (hook: string, n: number, from: number) =>
      queueDeliveries(
        pool,
        hook,
        [...Array(n).keys()].map((i) => `msg_${hook}_${i}`),
        from,
      );
    await queue("wh_0", 12, 0);
    for (const [i, h] of hooks.slice(1).entries()) await queue(h.id, 10, 100 * (i + 1));

    const workers = suite.store.dbs.map((d) =>
      // the slow endpoint's first attempt is held while the healthy ones are served: it must not time out
      testWorker(d.pool, suite.store.log, { attemptTimeoutMs: 30_000, concurrency: 4 }),
    );
    for (const w of workers) w.start();
    try {
      await waitUntil("every healthy endpoint's 10 deliveries", () => fast.every((f) => f.ids.length >= 10), {
        timeoutMs: 20_000,
        intervalMs: 20,
      });
      for (const f of fast) expect(f.ids).toHaveLength(10);
      // …all while the slow endpoint's oldest delivery was in flight, unanswered (its one attempt,
      // made first: its deliveries are the oldest): its backlog held nothing behind it
      expect([slow.got(), slow.ids.length]).toEqual([1, 0]);
      answerSlow();
      await eventually(async () => expect(slow.ids).toHaveLength(12), 15_000, 50);
      // the receiver records an id just before it answers: wait for the workers to record the
      // last answers too (stop() aborts attempts in flight, which then stay pending for a retry)
      await eventually(
        async () => {
          const left = await pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded'",
          );
          expect(left.rows[0]!.n).toBe(0);
        },
        5_000,
        50,
      );
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    for (const r of [slow, ...fast]) {
      expect(new Set(r.ids).size).toBe(r.ids.length); // nothing twice
      expect(r.maxOpen()).toBe(1); // never two attempts at once on one endpoint
    }
    const leases = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhooks WHERE lease_until IS NOT NULL",
    );
    expect(leases.rows[0]!.n).toBe(0);
  }, 60_000);

  it("an honest endpoint keeps its delivery lag under 2 s beside 20 slow-but-successful endpoints of 4 agents, each agent at most 2 in flight (docs/design/notifications.md#fair-shares)", async () => {
    const secret = TEST_SECRET;
    const pool = suite.store.db.pool;
    // 4 agents, 5 endpoints each on one receiver per agent, every answer a 204 after 1.5 s: a
    // success, but not a quick one; each endpoint starts with a backlog of 40 deliveries (a minute
    // of its answers: on the old rule the honest endpoint waited that long for a slot)
    const crowd = await Promise.all([0, 1, 2, 3].map(() => receiver(1_500)));
    for (const [a, r] of crowd.entries())
      for (let e = 0; e < 5; e++) {
        const id = `wh_fair_${a}_${e}`;
        await pool.query(
          "INSERT INTO webhooks (id, agent_id, url, events, secret, next_due_at) VALUES ($1, $2, $3, '{*}', $4, now())",
          [id, `ag_crowd_${a}`, `${r.url}/${e}`, secret],
        );
        await pool.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at)
             SELECT $1 || '_' || i, $2, 1000 + i, 'post.created', 'ev_fair_' || i,
                    '{"type":"post.created","timestamp":"t","data":{}}', now() - interval '1 minute'
               FROM generate_series(0, 39) i`,
          [`msg_${id}`, id],
        );
      }
    const honest = await receiver(0);
    await addEndpoint(pool, "wh_fair_honest", honest.url, "ag_honest");
    const worker = testWorker(pool, suite.store.log, {
      retrySchedule: [100],
      attemptTimeoutMs: 10_000,
      concurrency: 16,
    });
    worker.start();
    const queuedAt = new Map<string, number>();
    try {
      // the crowd is busy (its first answers are out) before the honest endpoint's events come
      await waitUntil("the crowd's first attempts", () => crowd.every((r) => r.got() > 0), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      for (let i = 0; i < 30; i++) {
        const id = `msg_fair_honest_${i}`;
        queuedAt.set(id, Date.now());
        await pool.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at)
             VALUES ($1, 'wh_fair_honest', $2, 'post.created', $3, '{"type":"post.created","timestamp":"t","data":{}}', now())`,
          [id, 5_000 + i, `ev_honest_${i}`],
        );
        await pool.query("UPDATE webhooks SET next_due_at = now() WHERE id = 'wh_fair_honest'");
        worker.notify();
        await waitUntil(`honest delivery ${i}`, () => honest.ids.includes(id), { timeoutMs: 20_000, intervalMs: 5 });
      }
    } finally {
      await worker.stop();
      // leave nothing due for the next test's worker
      await pool.query("DELETE FROM webhooks WHERE id LIKE 'wh_fair_%'");
    }
    const lags = honest.ids.map((id) => honest.receivedAt(id) - queuedAt.get(id)!).sort((x, y) => x - y);
    expect(lags).toHaveLength(30);
    const p99 = lags[Math.ceil(0.99 * lags.length) - 1]!;
    // the published bound, stretched like every wait on a loaded machine (TEST_TIME_SCALE)
    expect(p99).toBeLessThan(scaled(2_000));
    // one agent's endpoints never held more than its 2 slots
    for (const r of crowd) expect(r.maxOpen()).toBeLessThanOrEqual(2);
  }, 120_000);

  it("an attempt holds no connection during its HTTP exchange: more attempts in flight than the pool has connections (docs/design/notifications.md#connection-pool)", async () => {
    // a pool of 2 connections, 6 endpoints each answering after 1.5 s, 6 attempts at once
    const small = await suite.store.open(2);
    const slowAnswer = await receiver(1_500);
    for (let i = 0; i < 6; i++) {
      await small.pool.query(
        "INSERT INTO webhooks (id, agent_id, url, events, secret, next_due_at) VALUES ($1, $1 || '_owner', $2, '{*}', $3, now())",
        [`wh_pool_${i}`, slowAnswer.url, TEST_SECRET],
      );
      await small.pool.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at)
           VALUES ($1, $2, 0, 'post.created', 'ev_pool', '{"type":"post.created","timestamp":"t","data":{}}', now())`,
        [`msg_pool_${i}`, `wh_pool_${i}`],
      );
    }
    const worker = testWorker(small.pool, suite.store.log, {
      retrySchedule: [100],
      attemptTimeoutMs: 5_000,
      concurrency: 6,
    });
    worker.start();
    try {
      await eventually(async () => expect(slowAnswer.ids).toHaveLength(6), 20_000, 50);
    } finally {
      await worker.stop();
    }
    // had an attempt kept its connection across the exchange, at most 2 could be in flight at once
    expect(slowAnswer.maxOpen()).toBeGreaterThan(2);
  }, 60_000);
});
