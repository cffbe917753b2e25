import pg from "pg";
import { connect } from "nats";
import { createLogger, InProcessBus, JetStreamBus, processOnce, type EventBus, type Subscription } from "@aps/platform";
import {
  canRunPrivatePostgres,
  deleteTestStream,
  hasNats,
  pause,
  startPrivatePostgres,
  TEST_NATS_URL,
  uniqueBusNames,
  uniqueSuffix,
  waitUntil,
  type PrivateServer,
} from "@aps/testkit";

/**
 * Fault (docs/reliability.md): a consumer's database is down for 8 s while events arrive. Before the
 * fix, JetStream consumers gave up after 5 deliveries 1 s apart and the in-process bus after
 * ~0.75 s, so every event of the outage was dead-lettered (lost for the effect). Now outage
 * errors are redelivered with exponential backoff (capped) for as long as the outage lasts
 * (docs/design/events.md#redelivery): every event's effect lands once after the restart and nothing is parked.
 * The consumer writes through `processOnce` into a PRIVATE PostgreSQL 15 this test stops; the
 * bus is the machine's NATS JetStream (a stream of its own) or the in-process bus.
 */
const real = (await hasNats()) && canRunPrivatePostgres();
const TIMEOUT = 180_000;
const OUTAGE_MS = 8_000;
const log = createLogger("event-outage-test", "silent");

/** Counts the messages on `<prefix>.dlq.>` of `stream` (the JetStream dead-letter subjects). */
async function jetStreamDeadLetters(stream: string, prefix: string): Promise<number> {
  const nc = await connect({ servers: TEST_NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(stream, { subjects_filter: `${prefix}.dlq.>` });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  } finally {
    await nc.close();
  }
}

(real ? describe : describe.skip)(
  "events survive an 8-s outage of their consumer's database (private PostgreSQL 15; real NATS and in-process bus)" +
    (real ? "" : " (SKIPPED: no real NATS or no PostgreSQL 15 binaries runnable as postgres)"),
  () => {
    let server: PrivateServer;
    let admin: pg.Pool;
    let pool: pg.Pool;

    beforeAll(async () => {
      server = await startPrivatePostgres();
      admin = new pg.Pool({ connectionString: server.url, max: 1 });
      await admin.query(
        "CREATE TABLE processed_events (consumer text NOT NULL, event_id text NOT NULL, PRIMARY KEY (consumer, event_id))",
      );
      await admin.query(
        "CREATE TABLE effects (consumer text NOT NULL, event_id text NOT NULL, PRIMARY KEY (consumer, event_id))",
      );
      await admin.end();
      // The consumer's pool: a checkout fails after 1 s while the server is down, as a service's would.
      pool = new pg.Pool({ connectionString: server.url, max: 4, connectionTimeoutMillis: 1_000 });
      pool.on("error", () => undefined);
    }, TIMEOUT);
    afterAll(async () => {
      await pool?.end().catch(() => undefined);
      await server?.remove();
    }, TIMEOUT);

    const effects = async (consumer: string): Promise<number> => {
      const r = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM effects WHERE consumer = $1", [
        consumer,
      ]);
      return r.rows[0]!.n;
    };

    /** Runs the outage against `bus`; returns [events whose effect landed, ms from restart to the last effect]. */
    const outage = async (bus: EventBus, durable: string): Promise<{ landed: number; recoveryMs: number }> => {
      const subject = `${bus.prefix}.identity.award_due`;
      let sub: Subscription | undefined;
      try {
        sub = await bus.consume({
          durable,
          subjects: [subject],
          handler: async (e) => {
            await processOnce(pool, durable, e.eventId, async (tx) => {
              await tx.query("INSERT INTO effects (consumer, event_id) VALUES ($1, $2)", [durable, e.eventId]);
            });
          },
        });
        const publish = (i: number) =>
          bus.publish({
            subject,
            eventId: `${durable}-${i}-${uniqueSuffix()}`,
            payload: new Uint8Array([i]),
            headers: {},
          });
        for (let i = 0; i < 5; i++) await publish(i);
        await waitUntil("the 5 events before the outage", async () => (await effects(durable)) === 5, {
          timeoutMs: 20_000,
          intervalMs: 100,
        });

        await server.stop();
        // The in-process bus resolves a publish only once it is handled: do not await it here.
        const during = Array.from({ length: 20 }, (_, i) => publish(100 + i).catch(() => undefined));
        await pause(OUTAGE_MS, "the database outage lasts OUTAGE_MS, past the old give-up (5 deliveries 1 s apart)");
        await server.start();
        const restartedAt = Date.now();
        // Generous bound: the backoff of the last failure before the restart (≤ 8 s at this point).
        await waitUntil("every event of the outage", async () => (await effects(durable).catch(() => -1)) === 25, {
          timeoutMs: 45_000,
          intervalMs: 100,
        }).catch(() => undefined);
        const recoveryMs = Date.now() - restartedAt;
        await Promise.all(during);
        return { landed: await effects(durable), recoveryMs };
      } finally {
        await sub?.stop();
      }
    };

    it(
      "JetStream: all 25 effects land once after an 8-s database outage; 0 events dead-lettered",
      async () => {
        const names = uniqueBusNames();
        const bus = await JetStreamBus.connect({
          servers: TEST_NATS_URL,
          stream: names.stream,
          prefix: names.prefix,
          connectionName: "aps-event-outage-test",
          log,
        });
        try {
          const { landed, recoveryMs } = await outage(bus, "outage-js");
          console.log(
            `[event-outage] JetStream: ${landed}/25 effects, last one ${recoveryMs} ms after the database restart`,
          );
          expect(landed).toBe(25);
          expect(await jetStreamDeadLetters(names.stream, names.prefix)).toBe(0);
        } finally {
          await bus.close();
          await deleteTestStream(names.stream);
        }
      },
      TIMEOUT,
    );

    it(
      "in-process bus: all 25 effects land once after an 8-s database outage; 0 events parked",
      async () => {
        const bus = new InProcessBus(log, `t${uniqueSuffix()}.aps`);
        try {
          const { landed, recoveryMs } = await outage(bus, "outage-mem");
          console.log(
            `[event-outage] in-process: ${landed}/25 effects, last one ${recoveryMs} ms after the database restart`,
          );
          expect(landed).toBe(25);
          const dlq = (bus as { deadLetters?: { list(): Promise<unknown[]> } }).deadLetters;
          if (dlq) expect(await dlq.list()).toEqual([]);
        } finally {
          await bus.close();
        }
      },
      TIMEOUT,
    );
  },
);
