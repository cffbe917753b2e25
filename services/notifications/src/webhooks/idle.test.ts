import { eventually } from "@aps/testkit";
import { addEndpoint, describeOnPostgres, queueDeliveries, testWorker, useWebhookTestStore } from "./worker.fixture.js";

/**
 * A delivery worker with no endpoint (docs/design/notifications.md#per-endpoint-feed-cursor), on
 * the real PostgreSQL: once a pass found no enabled endpoint, a feed event wakes no claim (a
 * deployment without webhooks spent a transaction of five statements per public event); an
 * endpoint registered meanwhile by another replica is still found by the safety poll.
 */
describeOnPostgres("idle.test.ts", "a delivery worker without endpoints", () => {
  const suite = useWebhookTestStore("notifications-idle-test");
  /** Claim statements sent so far (the endpoint picks of a pass). */
  let claims = 0;
  beforeAll(async () => {
    // every client the pool hands out counts the claim statements it is sent (the pool's own
    // `query` asks for a client with a callback, the worker's transactions with a promise)
    const pool = suite.store.db.pool as unknown as { connect: (cb?: (...a: unknown[]) => void) => unknown };
    const connect = pool.connect.bind(suite.store.db.pool);
    const counted = (c: { query: (...a: unknown[]) => unknown; counted?: boolean }) => {
      if (c.counted) return;
      c.counted = true;
      const query = c.query.bind(c);
      c.query = (...a: unknown[]) => {
        const text = typeof a[0] === "string" ? a[0] : ((a[0] as { text?: string })?.text ?? "");
        if (/FROM webhooks w\b/.test(text)) claims++;
        return query(...a);
      };
    };
    pool.connect = (cb?: (...a: unknown[]) => void) => {
      if (cb)
        return connect((...r: unknown[]) => {
          if (r[1]) counted(r[1] as never);
          cb(...r);
        });
      return (connect() as Promise<never>).then((c) => (counted(c), c));
    };
  });

  const worker = (pollMs: number) => testWorker(suite.store.db.pool, suite.store.log, { retrySchedule: [100], pollMs });

  it("feed events wake no claim once a pass found no endpoint; a local registration (notify) does", async () => {
    const w = worker(600_000);
    w.start();
    await eventually(async () => expect(claims).toBeGreaterThan(0), 10_000, 20);
    await w.stop(); // the first pass is over: it found no endpoint
    const afterFirst = claims;
    w.start(); // a pass at start, like the first
    await w.stop();
    const perPass = claims - afterFirst;
    expect(perPass).toBeGreaterThan(0);
    w.start();
    await w.stop();
    const idle = claims;
    // with no endpoint, events stored in the feed start no pass (stop awaits any pass they started)
    (w as unknown as { loop: { halted: boolean } }).loop.halted = false;
    for (let i = 0; i < 20; i++) w.feedAdvanced();
    await w.stop();
    expect(claims).toBe(idle);
    // a registration on this replica wakes it
    (w as unknown as { loop: { halted: boolean } }).loop.halted = false;
    w.notify();
    await w.stop();
    expect(claims).toBe(idle + perPass);
  });

  it("an endpoint another replica registered is found by the safety poll and served", async () => {
    const got: string[] = [];
    const url = await suite.receivers.onEnd((req, res) => {
      got.push(String(req.headers["webhook-id"]));
      res.writeHead(204).end();
    });
    const w = worker(50);
    w.start();
    try {
      const before = claims;
      await eventually(async () => expect(claims).toBeGreaterThan(before), 10_000, 20);
      // written by "another replica": no wake reaches this worker
      await addEndpoint(suite.store.db.pool, "wh_other", url);
      await queueDeliveries(suite.store.db.pool, "wh_other", ["msg_other"], 1);
      w.feedAdvanced();
      await eventually(async () => expect(got).toEqual(["msg_other"]), 10_000, 20);
    } finally {
      await w.stop();
    }
  });
});
