import { connect, StorageType, nanos } from "nats";
import { hasNats, TEST_NATS_URL, uniqueBusNames } from "@aps/testkit";
import { createLogger } from "../log.js";
import { metricsText } from "../metrics.js";
import { JetStreamBus } from "./jetstream.js";
import { DEFAULT_STREAM_LIMITS } from "./stream-limits.js";

/**
 * Retention limits of the JetStream event stream (docs/design/events.md#stream-retention), on the real
 * NATS with a stream of its own per test: a new stream gets the limits, an existing stream
 * without limits (as created before) is updated to them, a busy subject is capped per subject
 * without evicting the others, and the limits are exported as `aps_event_stream_limit`.
 */
const natsUp = await hasNats();
const log = createLogger("stream-limits-test", "silent");

(natsUp ? describe : describe.skip)(
  "JetStream event stream limits (real NATS)" + (natsUp ? "" : " (SKIPPED: no NATS)"),
  () => {
    const opened: JetStreamBus[] = [];
    afterEach(async () => {
      for (const b of opened.splice(0)) {
        await b.deleteStream();
        await b.close();
      }
    });

    it("creates a missing stream with the default limits (7 d, 1 GiB, 1 000 000 per subject, discard old)", async () => {
      const { stream, prefix } = uniqueBusNames();
      const bus = await JetStreamBus.connect({
        servers: TEST_NATS_URL,
        stream,
        prefix,
        connectionName: "limits-test",
        log,
      });
      opened.push(bus);
      const nc = await connect({ servers: TEST_NATS_URL });
      const c = (await (await nc.jetstreamManager()).streams.info(stream)).config;
      await nc.close();
      expect({
        maxAge: c.max_age,
        maxBytes: c.max_bytes,
        perSubject: c.max_msgs_per_subject,
        discard: c.discard,
      }).toEqual({
        maxAge: DEFAULT_STREAM_LIMITS.maxAgeSeconds * 1e9,
        maxBytes: DEFAULT_STREAM_LIMITS.maxBytes,
        perSubject: DEFAULT_STREAM_LIMITS.maxMsgsPerSubject,
        discard: "old",
      });
    });

    it("updates an existing unlimited stream to the configured limits, caps a busy subject without evicting others, and exports the limits", async () => {
      const { stream, prefix } = uniqueBusNames();
      const nc = await connect({ servers: TEST_NATS_URL });
      const jsm = await nc.jetstreamManager();
      // the stream as it was created before the limits: none
      await jsm.streams.add({
        name: stream,
        subjects: [`${prefix}.>`],
        storage: StorageType.File,
        duplicate_window: nanos(120_000),
      });
      expect((await jsm.streams.info(stream)).config.max_msgs_per_subject).toBe(-1);
      const limits = { maxAgeSeconds: 3_600, maxBytes: 8 * 1024 * 1024, maxMsgsPerSubject: 3 };
      const bus = await JetStreamBus.connect({
        servers: TEST_NATS_URL,
        stream,
        prefix,
        connectionName: "limits-test",
        log,
        limits,
      });
      opened.push(bus);
      const c = (await jsm.streams.info(stream)).config;
      expect([c.max_age, c.max_bytes, c.max_msgs_per_subject]).toEqual([3_600e9, 8 * 1024 * 1024, 3]);

      const publish = (subject: string, i: number) =>
        bus.publish({
          subject: `${prefix}.${subject}`,
          eventId: `${stream}-${subject}-${i}`,
          payload: new Uint8Array([i]),
          headers: {},
        });
      await publish("council.case_closed", 0);
      for (let i = 0; i < 10; i++) await publish("forum.vote_cast", i);
      const st = await jsm.streams.info(stream, { subjects_filter: `${prefix}.>` });
      expect(st.state.subjects).toEqual({ [`${prefix}.council.case_closed`]: 1, [`${prefix}.forum.vote_cast`]: 3 });
      await nc.close();

      expect(await bus.streamState()).toMatchObject({ limits, messages: 4 });
      const text = (await metricsText()).body;
      expect(text).toMatch(/aps_event_stream_limit\{limit="max_msgs_per_subject"\} 3\b/);
      expect(text).toMatch(/aps_event_stream_limit\{limit="max_age_seconds"\} 3600\b/);
      expect(text).toMatch(/aps_event_stream_usage\{measure="messages"\} 4\b/);
    });
  },
);
