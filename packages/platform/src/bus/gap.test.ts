import { deleteTestStream, hasNats, TcpProxy, TEST_NATS_URL, uniqueBusNames, waitUntil } from "@aps/testkit";
import { createLogger } from "../log.js";
import { JetStreamBus } from "./jetstream.js";
import type { BusEvent } from "./types.js";

/**
 * An ephemeral subscription is told when events may have been missed (EventBus.subscribe's
 * `onGap`, docs/design/edge.md#authentication-cache): the bus's connection to the real NATS runs through a TCP proxy the test
 * cuts and restores; `onGap` is called when the connection is lost and again when it is back, and
 * an event published while it was cut never arrives (which is why the subscriber must be told), and
 * one published as soon as `onGap` reports the connection back does arrive.
 */
const log = createLogger("bus-gap-test", "silent");
const natsUp = await hasNats();
if (!natsUp) console.warn(`\n!! gap.test.ts: NO NATS at ${TEST_NATS_URL} — SKIPPED.\n`);

/** Looks at `cond` every 20 ms until it holds; throws after `ms` (× TEST_TIME_SCALE). */
async function waitFor(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  await waitUntil(what, cond, { timeoutMs: ms, intervalMs: 20 });
}

(natsUp ? describe : describe.skip)(
  "EventBus.subscribe's onGap on JetStream (real NATS through a cuttable proxy)",
  () => {
    it("is called when the connection is lost and when it is back; nothing is called while it holds", async () => {
      const target = new URL(TEST_NATS_URL);
      const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 4222) });
      await proxy.up();
      const { stream, prefix } = uniqueBusNames();
      const opts = { stream, prefix, connectionName: "aps-gap-test", log };
      const watched = await JetStreamBus.connect({ ...opts, servers: `nats://127.0.0.1:${proxy.port}` });
      const publisher = await JetStreamBus.connect({ ...opts, servers: TEST_NATS_URL });
      const got: string[] = [];
      let gaps = 0;
      const sub = await watched.subscribe(
        [`${prefix}.test.>`],
        (e: BusEvent) => void got.push(e.eventId),
        () => gaps++,
      );
      const publish = (eventId: string) =>
        publisher.publish({ subject: `${prefix}.test.thing`, eventId, payload: new Uint8Array(), headers: {} });
      try {
        await publish("before");
        await waitFor("the event before the cut", () => got.includes("before"));
        expect(gaps).toBe(0);

        await proxy.down();
        await waitFor("onGap on the lost connection", () => gaps >= 1);
        await publish("during");
        // back with every byte to NATS 300 ms late: the resent SUB reaches the server well after
        // nats.js reports the reconnect, so a gap reported before the interest holds loses "after"
        await proxy.up({ upstreamLatencyMs: 300 });
        await waitFor("onGap on the connection back", () => gaps >= 2, 20_000);

        await publish("after"); // at once, on the other connection: the subscriber's catch-up moment
        await waitFor("the event after the reconnect", () => got.includes("after"));
        // the one published while cut was missed: exactly what onGap warns of
        expect(got).toEqual(["before", "after"]);
        expect(gaps).toBe(2);
      } finally {
        await sub.stop();
        await watched.close();
        await publisher.close();
        await proxy.down();
        await deleteTestStream(stream);
      }
    }, 60_000);
  },
);
