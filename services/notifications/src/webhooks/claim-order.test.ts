import { eventually } from "@aps/testkit";
import { describeOnPostgres, TEST_SECRET, testWorker, useWebhookTestStore } from "./worker.fixture.js";

/**
 * The claim takes the endpoints behind the feed's head least advanced first, by their numeric
 * cursor (docs/design/notifications.md#claims-leases-and-the-pool), on the real PostgreSQL. The claim once ordered by the select list's
 * `feed_cursor::text`, so a cursor of 99 sorted after 100–989: an endpoint whose cursor had fewer
 * digits than the others' was left out of every claim while they had work — in the fan-out test,
 * endpoints stuck at the feed's 99th event for 12–21 s. With one slot, the first endpoint claimed
 * must be the one at 99, not the one at 100.
 */
describeOnPostgres("claim-order.test.ts", "webhook claim order", () => {
  const suite = useWebhookTestStore("notifications-claim-order-test");
  let url = "";
  /** The endpoint path (`a` or `b`) of each request, in arrival order. */
  const arrivals: string[] = [];

  beforeAll(async () => {
    url = await suite.receivers.onEnd((req, res) => {
      arrivals.push(String(req.url).split("/").at(-1)!);
      res.writeHead(204).end();
    });
  });

  it("claims the endpoint at cursor 99 before the one at cursor 100 (numbers, not text)", async () => {
    // a feed of 120 events (seq 1..120) and two `*` endpoints: a at 99, b at 100, nothing queued
    await suite.store.db.pool.query(
      `INSERT INTO feed_events (event_id, type, post_id, actor_id, occurred_at, data)
       SELECT 'ev_' || g, 'post.created', 'p_' || g, 'ag_x', now(), jsonb_build_object('postId', 'p_' || g)
       FROM generate_series(1, 120) g`,
    );
    for (const [id, cursor] of [
      ["wh_a", 99],
      ["wh_b", 100],
    ] as const)
      await suite.store.db.pool.query(
        "INSERT INTO webhooks (id, agent_id, url, events, secret, feed_cursor) VALUES ($1, 'ag_o', $2, '{*}', $3, $4)",
        [id, `${url}/${id.slice(3)}`, TEST_SECRET, cursor],
      );
    const worker = testWorker(suite.store.db.pool, suite.store.log, {
      retrySchedule: [5_000],
      attemptTimeoutMs: 5_000,
      concurrency: 1, // one slot: the claim takes the single least advanced endpoint
      pollMs: 60_000,
    });
    worker.start();
    try {
      await eventually(async () => expect(arrivals.length).toBeGreaterThan(0), 10_000, 50);
      expect(arrivals[0]).toBe("a");
      // and both catch up to the head in the end: a's 21 events and b's 20
      await eventually(async () => expect(arrivals.length).toBe(41), 15_000, 100);
      expect(arrivals.filter((x) => x === "a")).toHaveLength(21);
    } finally {
      await worker.stop();
    }
  }, 40_000);
});
