import { connect, StorageType, nanos } from "nats";
import { hasNats, TEST_NATS_URL, uniqueBusNames } from "@aps/testkit";
import { createLogger } from "../log.js";
import { JetStreamBus } from "./jetstream.js";
import { commonEnvSchema, openEventBus } from "../runtime.js";
import { parseEnv } from "../config.js";

/**
 * Replicas of the JetStream event stream (`NATS_STREAM_REPLICAS`, docs/design/events.md#stream-replicas)
 * on the real, single-server NATS of this machine: a new stream gets the configured replicas and
 * limits; an existing stream with other limits is updated in place (its events stay); asking a
 * single server for 3 replicas fails at connect with an error that names the variable and the
 * cause, for a new stream and for an existing one, and leaves an existing stream as it was.
 */
const natsUp = await hasNats();
const log = createLogger("stream-replicas-test", "silent");

(natsUp ? describe : describe.skip)(
  "JetStream event stream replicas (real NATS)" + (natsUp ? "" : " (SKIPPED: no NATS)"),
  () => {
    const opened: JetStreamBus[] = [];
    const streams: string[] = [];
    afterEach(async () => {
      for (const b of opened.splice(0)) await b.close();
      const nc = await connect({ servers: TEST_NATS_URL });
      const jsm = await nc.jetstreamManager();
      for (const s of streams.splice(0)) await jsm.streams.delete(s).catch(() => undefined);
      await nc.close();
    });

    const limits = { maxAgeSeconds: 7_200, maxBytes: 16 * 1024 * 1024, maxMsgsPerSubject: 50 };

    it("creates a missing stream with the configured replicas (1) and limits", async () => {
      const { stream, prefix } = uniqueBusNames();
      streams.push(stream);
      opened.push(
        await JetStreamBus.connect({
          servers: TEST_NATS_URL,
          stream,
          prefix,
          connectionName: "replicas-test",
          log,
          limits,
          replicas: 1,
        }),
      );
      const nc = await connect({ servers: TEST_NATS_URL });
      const c = (await (await nc.jetstreamManager()).streams.info(stream)).config;
      await nc.close();
      expect([c.num_replicas, c.max_age, c.max_bytes, c.max_msgs_per_subject]).toEqual([
        1,
        7_200e9,
        16 * 1024 * 1024,
        50,
      ]);
    });

    it("updates an existing stream with other limits in place: new limits, replicas 1, its events kept", async () => {
      const { stream, prefix } = uniqueBusNames();
      streams.push(stream);
      const nc = await connect({ servers: TEST_NATS_URL });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({
        name: stream,
        subjects: [`${prefix}.>`],
        storage: StorageType.File,
        duplicate_window: nanos(120_000),
        max_age: nanos(600_000),
        max_bytes: 2 * 1024 * 1024,
        max_msgs_per_subject: 5,
        num_replicas: 1,
      });
      await nc.jetstream().publish(`${prefix}.forum.post_created`, new Uint8Array([1]), { msgID: "kept-1" });
      opened.push(
        await JetStreamBus.connect({
          servers: TEST_NATS_URL,
          stream,
          prefix,
          connectionName: "replicas-test",
          log,
          limits,
          replicas: 1,
        }),
      );
      const info = await jsm.streams.info(stream);
      await nc.close();
      expect([
        info.config.num_replicas,
        info.config.max_age,
        info.config.max_bytes,
        info.config.max_msgs_per_subject,
      ]).toEqual([1, 7_200e9, 16 * 1024 * 1024, 50]);
      expect(info.state.messages).toBe(1);
    });

    it("refuses 3 replicas on a single server with an error naming NATS_STREAM_REPLICAS and the cause (new and existing stream)", async () => {
      const { stream, prefix } = uniqueBusNames();
      streams.push(stream);
      const connect3 = () =>
        JetStreamBus.connect({
          servers: TEST_NATS_URL,
          stream,
          prefix,
          connectionName: "replicas-test",
          log,
          limits,
          replicas: 3,
        });
      const message =
        /NATS_STREAM_REPLICAS=3.*event stream .*not clustered|NATS_STREAM_REPLICAS=3.*replicas > 1 not supported/is;
      await expect(connect3()).rejects.toThrow(message);
      // the stream exists with 1 replica (created by a first start): asking for 3 fails the same way, and changes nothing
      const one = await JetStreamBus.connect({
        servers: TEST_NATS_URL,
        stream,
        prefix,
        connectionName: "replicas-test",
        log,
        limits,
        replicas: 1,
      });
      opened.push(one);
      await expect(connect3()).rejects.toThrow(message);
      const nc = await connect({ servers: TEST_NATS_URL });
      const c = (await (await nc.jetstreamManager()).streams.info(stream)).config;
      await nc.close();
      expect([c.num_replicas, c.max_bytes]).toEqual([1, 16 * 1024 * 1024]);
    });

    it("openEventBus — every service's one way to its bus (docs/design/services.md#one-service-contract) — applies NATS_STREAM_REPLICAS for any service (knowledge's own bus once ignored it)", async () => {
      const { stream, prefix } = uniqueBusNames();
      streams.push(stream);
      const cfg = parseEnv(commonEnvSchema, {
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: stream,
        APS_SUBJECT_PREFIX: prefix,
        NATS_STREAM_REPLICAS: "3",
      });
      for (const service of ["knowledge", "forum"])
        await expect(openEventBus(service, cfg, log)).rejects.toThrow(/NATS_STREAM_REPLICAS=3/);
      const bus = await openEventBus(
        "knowledge",
        { ...cfg, NATS_STREAM_REPLICAS: 1, NATS_STREAM_MAX_MSGS_PER_SUBJECT: 77 },
        log,
      );
      opened.push(bus as JetStreamBus);
      const nc = await connect({ servers: TEST_NATS_URL });
      const c = (await (await nc.jetstreamManager()).streams.info(stream)).config;
      await nc.close();
      expect([c.num_replicas, c.max_msgs_per_subject]).toEqual([1, 77]);
    });
  },
);
