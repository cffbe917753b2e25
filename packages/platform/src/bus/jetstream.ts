import {
  AckPolicy,
  DeliverPolicy,
  Events,
  StorageType,
  connect,
  headers as natsHeaders,
  nanos,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from "nats";
import type { BusEvent, ConsumerSpec, EphemeralHandler, EventBus, Subscription } from "./types.js";
import type { Logger } from "../log.js";
import { withConsumerSpan } from "./tracing.js";
import {
  consumerDeliveries,
  consumerFailures,
  eventsParked,
  registerDeadLetters,
  registerLag,
  registerStream,
  zeroSeries,
} from "../metrics.js";
import { DEFAULT_STREAM_LIMITS, limitsOfConfig, streamLimitConfig, type StreamLimits } from "./stream-limits.js";
import {
  DEFAULT_REDELIVERY,
  decideRedelivery,
  errorText,
  type DeadLetterQueue,
  type FailureKind,
  type ParkedEvent,
  type RedeliveryPolicy,
} from "./redelivery.js";

/** How long one pull request of a consumer waits for events, ms (also the longest a stop waits). */
const FETCH_EXPIRES_MS = 1_000;

/** Longest a close waits for the connection to drain before closing it outright, ms. */
const CLOSE_DRAIN_MS = 3_000;

/**
 * JetStream's `ack_wait` of the durable consumers unless configured (`NATS_ACK_WAIT_MS`): how long
 * a delivery may stay unacknowledged before the server delivers it again (docs/design/events.md#jetstream-stream-and-consumers).
 */
export const DEFAULT_ACK_WAIT_MS = 30_000;

/** Most events one pull of a consumer asks for (fewer with a short ack wait, see fetchBatchSize). */
const MAX_FETCH_BATCH = 64;

/**
 * Handling budget per event of a fetched batch, ms: a batch asks for at most `ackWaitMs / 100`
 * events, so its last event is handled well within `ack_wait` of its delivery (see fetchBatchSize).
 */
const HANDLING_BUDGET_MS = 100;

/**
 * Events one pull asks for with ack wait `ackWaitMs`: the server starts every event's `ack_wait`
 * when it sends the batch, and the events are handled one after another, so a batch of 64 with a
 * 2 s ack wait would see its tail redelivered while still waiting its turn. At most 64 (the
 * default 30 s gives 64), at least 1.
 */
export function fetchBatchSize(ackWaitMs: number): number {
  return Math.max(1, Math.min(MAX_FETCH_BATCH, Math.floor(ackWaitMs / HANDLING_BUDGET_MS)));
}

/** Where and how to reach JetStream. */
export interface JetStreamOptions {
  /** Comma-separated NATS URLs (`NATS_URL`). */
  servers: string;
  /** Stream holding every APS event (default `APS`). */
  stream?: string;
  /** Subject prefix (default `aps`); the stream captures `<prefix>.>`. */
  prefix?: string;
  /** Name shown in the NATS server's connection list. */
  connectionName: string;
  /** NATS user and password (`NATS_USER` / `NATS_PASSWORD`; the chart's per-service users, docs/design/services.md#caller-policy-and-internal-trust). */
  user?: string | undefined;
  pass?: string | undefined;
  /**
   * Retention limits the stream is created with — and updated to when it exists with others
   * (docs/design/events.md#stream-retention). Unset: a missing stream is created with DEFAULT_STREAM_LIMITS and an
   * existing one is left as it is (the gateway, which only subscribes, passes none).
   */
  limits?: StreamLimits;
  /**
   * Copies of the stream the JetStream cluster keeps (`NATS_STREAM_REPLICAS`, 1–5;
   * docs/design/events.md#stream-replicas): a new stream is created with them and an existing one with another count is
   * updated in place (JetStream moves the stream's data to the new peers). Unset: 1 for a new stream,
   * an existing one left as it is. More than 1 needs a clustered NATS: a single server refuses, and
   * `connect` then throws an error naming the variable.
   */
  replicas?: number;
  /** Backoff and limits of redelivery after a failed handler (default DEFAULT_REDELIVERY; docs/design/events.md#redelivery). */
  redelivery?: Partial<RedeliveryPolicy>;
  /**
   * `ack_wait` of the durable consumers, ms (`NATS_ACK_WAIT_MS`, default DEFAULT_ACK_WAIT_MS): how
   * long a delivery held by a process that died or was cut off waits before JetStream delivers it
   * again. Set on consumers this bus creates and updated on existing ones (docs/design/events.md#jetstream-stream-and-consumers).
   */
  ackWaitMs?: number;
  log: Logger;
}

/**
 * EventBus on NATS JetStream (docs/design/events.md#path-of-an-event): a file-backed stream `<stream>` capturing
 * `<prefix>.>` with a 2-minute duplicate window and retention limits (max age, bytes, events per
 * subject; docs/design/events.md#stream-retention); publishes carry `Nats-Msg-Id = eventId`;
 * consumers are durable pull consumers with explicit ack and redelivery by NAK with an exponential
 * backoff (1 s doubling to 60 s); an outage is retried for as long as it lasts, and only poison
 * events (or ones failing with an unclassified error `maxDeliver` times) are parked on the
 * dead-letter subject `<prefix>.dlq.<durable>`, listed and replayed through `deadLetters`
 * (docs/design/events.md#redelivery); they pull in
 * fetches of ≤ 1 s, so a stopped consumer leaves no delivery in flight unacknowledged behind it. A delivery
 * a process never acknowledged (it died, or its connection was cut) is delivered again after
 * `ack_wait` (`ackWaitMs`, default 30 s; docs/design/events.md#jetstream-stream-and-consumers). The client reconnects forever, so a NATS
 * restart only delays delivery.
 */
export class JetStreamBus implements EventBus {
  readonly prefix: string;
  /** One connection: the server stores publishes in the order they were sent (docs/design/events.md#relay). */
  readonly ordersConcurrentPublishes = true;
  private readonly stream: string;
  private readonly subs = new Set<Subscription>();
  /** The consumers (ConsumerSpec.durable) this process runs: their dead-letter counts start at 0. */
  private readonly parkers = new Set<string>();
  /** The `onGap` callbacks of the running ephemeral subscriptions (EventBus.subscribe). */
  private readonly gapListeners = new Set<() => void>();
  private readonly durables = new Set<string>();
  private readonly unregisterLag = registerLag(this);
  private readonly unregisterDeadLetters = registerDeadLetters(this);
  private readonly unregisterStream = registerStream(this);
  private readonly policy: RedeliveryPolicy;
  /** `ack_wait` of this bus's durable consumers, ms. */
  readonly ackWaitMs: number;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly opts: JetStreamOptions,
  ) {
    this.prefix = opts.prefix ?? "aps";
    this.stream = opts.stream ?? "APS";
    this.policy = { ...DEFAULT_REDELIVERY, ...opts.redelivery };
    this.ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    void this.watchGaps();
  }

  /**
   * Calls every `onGap` listener when the connection is lost and when it is back: core NATS
   * subscriptions get nothing published in between (docs/design/edge.md#authentication-cache). Ends when the connection closes.
   * On the way back the listeners are called only once the server has registered the resent
   * interest (a flush: nats.js writes the SUBs just before it reports the reconnect), so what a
   * listener does to catch up cannot race an event it would then miss. A flush cut short by another
   * disconnect still calls them.
   */
  private async watchGaps(): Promise<void> {
    try {
      for await (const s of this.nc.status()) {
        if (s.type === Events.Disconnect) this.notifyGap();
        else if (s.type === Events.Reconnect) {
          this.nc.flush().then(
            () => this.notifyGap(),
            () => this.notifyGap(),
          );
        }
      }
    } catch {
      // the status iterator ends (or fails) with the connection: nothing more to watch
    }
  }

  /** Calls every running subscription's `onGap`; one that throws is logged and the rest still run. */
  private notifyGap(): void {
    for (const onGap of this.gapListeners) {
      try {
        onGap();
      } catch (err) {
        this.opts.log.warn({ err: String(err) }, "an ephemeral subscriber's gap handler failed");
      }
    }
  }

  /** Connects and creates (or updates) the stream. Throws when NATS cannot be reached. */
  static async connect(opts: JetStreamOptions): Promise<JetStreamBus> {
    const nc = await connect({
      servers: opts.servers.split(",").map((s) => s.trim()),
      name: opts.connectionName,
      ...(opts.user !== undefined ? { user: opts.user, pass: opts.pass ?? "" } : {}),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // No Error (with its stack) captured per request and publish to decorate a later timeout:
      // ~6 % of the forum relay's CPU under votes (nats.js documents the option as a speed-up).
      noAsyncTraces: true,
    });
    const jsm = await nc.jetstreamManager();
    const bus = new JetStreamBus(nc, nc.jetstream(), jsm, opts);
    try {
      await bus.ensureStream();
    } catch (err) {
      await bus.close().catch(() => undefined);
      throw err;
    }
    return bus;
  }

  private async ensureStream(): Promise<void> {
    const subjects = [`${this.prefix}.>`];
    const wanted = this.opts.limits;
    const replicas = this.opts.replicas;
    // A single server refuses a new stream of 3 replicas but (NATS 2.9/2.10) accepts the same
    // update of an existing one and then reports 3 copies it does not have: check it here.
    // A server in a cluster names its cluster in its INFO.
    if (replicas !== undefined && replicas > 1 && !this.nc.info?.cluster)
      throw this.replicaError(`server ${this.nc.info?.server_name ?? "?"} is not clustered`);
    const info = await this.jsm.streams.info(this.stream).catch(() => undefined);
    if (!info) {
      try {
        await this.jsm.streams.add({
          name: this.stream,
          subjects,
          storage: StorageType.File,
          duplicate_window: nanos(120_000),
          num_replicas: replicas ?? 1,
          ...streamLimitConfig(wanted ?? DEFAULT_STREAM_LIMITS),
        });
        return;
      } catch (err) {
        if (isReplicaRefusal(err)) throw this.replicaError(errorText(err));
        // Another process may have created it in between.
        await this.jsm.streams.info(this.stream).catch(() => {
          throw err;
        });
      }
    }
    const current = info?.config ?? (await this.jsm.streams.info(this.stream)).config;
    const have = limitsOfConfig(current);
    const limitsDiffer =
      wanted !== undefined &&
      (have.maxAgeSeconds !== wanted.maxAgeSeconds ||
        have.maxBytes !== wanted.maxBytes ||
        have.maxMsgsPerSubject !== wanted.maxMsgsPerSubject ||
        current.discard !== streamLimitConfig(wanted).discard);
    const replicasDiffer = replicas !== undefined && (current.num_replicas ?? 1) !== replicas;
    if (!limitsDiffer && !replicasDiffer) return;
    try {
      // An in-place update: limits and num_replicas are editable on a live stream (its events stay).
      await this.jsm.streams.update(this.stream, {
        ...current,
        ...(wanted ? streamLimitConfig(wanted) : {}),
        ...(replicas !== undefined ? { num_replicas: replicas } : {}),
      });
    } catch (err) {
      if (isReplicaRefusal(err)) throw this.replicaError(errorText(err));
      throw err;
    }
    this.opts.log.info(
      { stream: this.stream, from: { ...have, replicas: current.num_replicas }, to: { ...wanted, replicas } },
      "event stream config updated",
    );
  }

  /** The startup error for a replica count the NATS deployment cannot hold (docs/design/events.md#stream-replicas). */
  private replicaError(why: string): Error {
    return new Error(
      `NATS_STREAM_REPLICAS=${this.opts.replicas} cannot be applied to the event stream ${this.stream}: ` +
        `${why}. More than 1 replica needs a JetStream cluster of at least ` +
        `that many servers; a single server is not clustered — set NATS_STREAM_REPLICAS=1 there.`,
    );
  }

  /** The stream's configured limits and what it holds now (`aps_event_stream_*`, docs/design/events.md#stream-retention). */
  async streamState(): Promise<{ limits: StreamLimits; bytes: number; messages: number }> {
    const info = await this.jsm.streams.info(this.stream);
    return { limits: limitsOfConfig(info.config), bytes: info.state.bytes, messages: info.state.messages };
  }

  async publish(event: BusEvent): Promise<void> {
    const h = natsHeaders();
    for (const [k, v] of Object.entries(event.headers)) h.set(k, v);
    await this.js.publish(event.subject, event.payload, { msgID: event.eventId, headers: h, timeout: 5_000 });
  }

  async consume(spec: ConsumerSpec): Promise<Subscription> {
    zeroSeries(eventsParked, { durable: [spec.durable], kind: ["poison", "unknown"] });
    zeroSeries(consumerDeliveries, { durable: [spec.durable] });
    zeroSeries(consumerFailures, { durable: [spec.durable] });
    this.parkers.add(spec.durable);
    const parts = await Promise.all(
      spec.subjects.map((subject) =>
        this.consumeOne(
          spec,
          subject,
          spec.subjects.length === 1 ? spec.durable : `${spec.durable}__${subject.replace(/[.*>]/g, "_")}`,
        ),
      ),
    );
    const sub: Subscription = {
      stop: async () => {
        this.subs.delete(sub);
        await Promise.all(parts.map((p) => p.stop()));
      },
    };
    this.subs.add(sub);
    return sub;
  }

  private async consumeOne(spec: ConsumerSpec, subject: string, durable: string): Promise<Subscription> {
    const config = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subject,
      ack_wait: nanos(this.ackWaitMs),
    };
    try {
      await this.jsm.consumers.add(this.stream, config);
    } catch {
      await this.jsm.consumers.update(this.stream, durable, { ack_wait: config.ack_wait });
    }
    const consumer = await this.js.consumers.get(this.stream, durable);
    this.durables.add(durable);
    // Pull in bounded fetches rather than one endless `consume()`: closing a consume() drops
    // deliveries already on the wire to its inbox, and those stay unacknowledged until ack_wait
    // passes. A fetch ends when the server has answered its pull request (batch full or
    // expired), so stopping between fetches strands nothing; a stop waits ≤ FETCH_EXPIRES_MS.
    const maxMessages = fetchBatchSize(this.ackWaitMs);
    const parallel = Math.max(1, Math.floor(spec.concurrency?.[subject] ?? 1));
    let stopping = false;
    let failing = false;
    const loop = (async () => {
      while (!stopping) {
        try {
          const batch: ConsumerMessages = await consumer.fetch({
            max_messages: maxMessages,
            expires: FETCH_EXPIRES_MS,
          });
          if (parallel === 1) for await (const m of batch) await this.handle(spec, m);
          else await handleAtOnce(batch, parallel, (m) => this.handle(spec, m));
          failing = false;
        } catch (err) {
          if (stopping) break;
          if (!failing) this.opts.log.warn({ err: String(err), durable }, "pulling events failed; retrying");
          failing = true;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
    return {
      stop: async () => {
        stopping = true;
        this.durables.delete(durable);
        await loop;
      },
    };
  }

  /**
   * Ephemeral subscription (EventBus.subscribe): a core NATS subscription per filter. JetStream
   * publishes are ordinary NATS messages, so every process subscribed gets them as they are
   * published; nothing is created on the server beyond the interest, and events published while
   * disconnected are not replayed. Resolves once the server has registered the interest.
   */
  async subscribe(subjects: string[], handler: EphemeralHandler, onGap?: () => void): Promise<Subscription> {
    const parts = subjects.map((subject) => {
      const sub = this.nc.subscribe(subject);
      const loop = (async () => {
        for await (const m of sub) await this.handleEphemeral(m, handler);
      })();
      return { sub, loop };
    });
    await this.nc.flush();
    if (onGap) this.gapListeners.add(onGap);
    const s: Subscription = {
      stop: async () => {
        this.subs.delete(s);
        if (onGap) this.gapListeners.delete(onGap);
        for (const p of parts) p.sub.unsubscribe();
        await Promise.all(parts.map((p) => p.loop));
      },
    };
    this.subs.add(s);
    return s;
  }

  private async handleEphemeral(m: Msg, handler: EphemeralHandler): Promise<void> {
    const headers = headerRecord(m.headers);
    try {
      await handler({ subject: m.subject, eventId: eventIdOf(headers), payload: m.data, headers });
    } catch (err) {
      this.opts.log.warn({ err: String(err), subject: m.subject }, "ephemeral subscriber failed");
    }
  }

  private async handle(spec: ConsumerSpec, m: JsMsg): Promise<void> {
    const headers = headerRecord(m.headers);
    const event: BusEvent = { subject: m.subject, eventId: eventIdOf(headers), payload: m.data, headers };
    const deliveryCount = m.info.redeliveryCount;
    try {
      await withConsumerSpan(event, spec.durable, deliveryCount, () => spec.handler(event, { deliveryCount }));
      m.ack();
    } catch (err) {
      const policy = spec.maxDeliver ? { ...this.policy, maxDeliver: spec.maxDeliver } : this.policy;
      const decision = decideRedelivery(err, deliveryCount, policy);
      this.opts.log.warn(
        { err: String(err), durable: spec.durable, subject: m.subject, deliveryCount, kind: decision.kind },
        "event handler failed",
      );
      if (decision.action === "retry") {
        m.nak(decision.delayMs);
        return;
      }
      try {
        await this.park(spec.durable, m, headers, err, decision.kind, deliveryCount);
        m.term();
        eventsParked.inc({ durable: spec.durable, kind: decision.kind });
        this.opts.log.error(
          { durable: spec.durable, subject: m.subject, eventId: event.eventId, kind: decision.kind },
          "event parked in the dead-letter queue",
        );
      } catch {
        m.nak(policy.maxDelayMs);
      }
    }
  }

  /**
   * Publishes a failed delivery on `<prefix>.dlq.<durable>` with the original headers and
   * `aps-original-subject`, `aps-durable`, `aps-event-id`, `aps-delivery-count`, `aps-failure-kind`,
   * `aps-error`, `aps-parked-at`. Its message id is derived from the delivered message's stream sequence, so parking twice
   * (a crash between the publish and the term) stores it once.
   */
  private async park(
    durable: string,
    m: JsMsg,
    headers: Record<string, string>,
    err: unknown,
    kind: FailureKind,
    deliveryCount: number,
  ): Promise<void> {
    const h = natsHeaders();
    for (const [k, v] of Object.entries(headers)) if (k !== "nats-msg-id") h.set(k, v);
    const eventId = eventIdOf(headers);
    h.set(DLQ.subject, m.subject);
    h.set(DLQ.durable, durable);
    h.set(DLQ.eventId, eventId);
    h.set(DLQ.deliveryCount, String(deliveryCount));
    h.set(DLQ.kind, kind);
    h.set(DLQ.error, errorText(err).replace(/[\r\n]+/g, " "));
    h.set(DLQ.parkedAt, new Date().toISOString());
    await this.js.publish(`${this.prefix}.dlq.${durable}`, m.data, {
      headers: h,
      msgID: `dlq.${durable}.${m.info.streamSequence}`,
      timeout: 5_000,
    });
  }

  /**
   * The dead-letter queue of this stream (docs/design/events.md#redelivery): `list` reads `<prefix>.dlq.>` with an
   * ordered consumer; `replay(id)` publishes the message of stream sequence `id` again on its
   * original subject (a new message id, so the duplicate window does not drop it; every consumer
   * of that subject gets it, and their processed-event records make it a no-op where it was
   * already handled), then deletes it from the stream.
   */
  readonly deadLetters: DeadLetterQueue = {
    list: async (limit = 100) => {
      const total = Object.values(await this.deadLetterCounts()).reduce((a, b) => a + b, 0);
      if (total === 0) return [];
      const consumer = await this.js.consumers.get(this.stream, { filterSubjects: `${this.prefix}.dlq.>` });
      const out: ParkedEvent[] = [];
      const want = Math.min(limit, total);
      while (out.length < want) {
        const batch = await consumer.fetch({ max_messages: want - out.length, expires: 2_000 });
        let got = 0;
        for await (const m of batch) {
          got++;
          out.push(parkedFrom(String(m.seq), m.subject, headerRecord(m.headers), m.data.length, m.info.timestampNanos));
        }
        if (got === 0) break;
      }
      return out; // an ordered consumer is ephemeral: the server removes it once idle
    },
    replay: async (id) => {
      const seq = Number(id);
      if (!Number.isSafeInteger(seq) || seq <= 0) return false;
      const sm = await this.jsm.streams.getMessage(this.stream, { seq }).catch(() => undefined);
      if (!sm || !sm.subject.startsWith(`${this.prefix}.dlq.`)) return false;
      const headers = headerRecord(sm.header);
      const original = headers[DLQ.subject];
      if (!original) return false;
      const h = natsHeaders();
      for (const [k, v] of Object.entries(headers))
        if (!(Object.values(DLQ) as string[]).includes(k) && k !== "nats-msg-id") h.set(k, v);
      // the replay keeps the event's id for its consumers, though its Nats-Msg-Id is new
      const eventId = headers[DLQ.eventId];
      if (eventId) h.set(DLQ.eventId, eventId);
      await this.js.publish(original, sm.data, { headers: h, msgID: `replay.${this.stream}.${seq}`, timeout: 5_000 });
      await this.jsm.streams.deleteMessage(this.stream, seq, false);
      return true;
    },
  };

  /** Events in the dead-letter queue by the durable that parked them (`aps_dead_letter_events`). */
  async deadLetterCounts(): Promise<Record<string, number>> {
    const info = await this.jsm.streams.info(this.stream, { subjects_filter: `${this.prefix}.dlq.>` });
    // every consumer of this process at 0 first: its panel and alert read 0, not "no data"
    const out: Record<string, number> = Object.fromEntries([...this.parkers].map((d) => [d, 0]));
    const head = `${this.prefix}.dlq.`;
    for (const [subject, n] of Object.entries(info.state.subjects ?? {}))
      out[subject.slice(head.length)] = (out[subject.slice(head.length)] ?? 0) + n;
    return out;
  }

  /** Deletes this bus's stream (tests use a stream of their own). */
  async deleteStream(): Promise<void> {
    await this.jsm.streams.delete(this.stream).catch(() => undefined);
  }

  /** Names of every consumer on this bus's stream, whoever created them (operators, tests). */
  async consumerNames(): Promise<string[]> {
    const names: string[] = [];
    for await (const c of this.jsm.consumers.list(this.stream)) names.push(c.name);
    return names;
  }

  /** Lag of this bus's running consumers (`aps_consumer_pending`): pending + unacknowledged. */
  async pending(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    await Promise.all(
      [...this.durables].map(async (d) => {
        const info = await this.jsm.consumers.info(this.stream, d).catch(() => undefined);
        if (info) out[d] = info.num_pending + info.num_ack_pending;
      }),
    );
    return out;
  }

  /**
   * Stops every consumer (each finishes the fetch in hand and acks what it handled), then drains
   * the connection. A drain needs the server: when NATS is unreachable it gives up after
   * CLOSE_DRAIN_MS and closes the connection, so a shutdown during a NATS outage still ends
   * (nothing is lost: unpublished events stay in the outboxes, unacked ones are redelivered).
   */
  async close(): Promise<void> {
    this.unregisterLag();
    this.unregisterDeadLetters();
    this.unregisterStream();
    await Promise.all([...this.subs].map((s) => s.stop()));
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.nc.drain().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), CLOSE_DRAIN_MS))),
    ]);
    clearTimeout(timer);
    if (!drained) await this.nc.close().catch(() => undefined);
  }
}

/**
 * Whether `err` is JetStream refusing a stream's replica count: a single server ("replicas > 1 not
 * supported in non-clustered mode", error 10074) or a cluster with fewer peers than asked
 * ("insufficient resources", 10023, or "no suitable peers for placement", 10005).
 */
function isReplicaRefusal(err: unknown): boolean {
  const code = (err as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code;
  return (
    code === 10074 ||
    code === 10005 ||
    code === 10023 ||
    /replicas > 1 not supported|non-clustered|no suitable peers|insufficient resources/i.test(String(err))
  );
}

/** The event's id: `aps-event-id` on a replayed event (docs/design/events.md#redelivery), its `Nats-Msg-Id` otherwise. */
function eventIdOf(headers: Record<string, string>): string {
  return headers["aps-event-id"] ?? headers["nats-msg-id"] ?? "";
}

/** NATS headers as a record with lower-case names (first value of each). */
function headerRecord(h: MsgHdrs | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (h) for (const [k, v] of h) if (v[0] !== undefined) headers[k.toLowerCase()] = v[0];
  return headers;
}

/** Headers a parked event carries in the dead-letter queue (lower case, as headerRecord gives them). */
const DLQ = {
  subject: "aps-original-subject",
  durable: "aps-durable",
  eventId: "aps-event-id",
  deliveryCount: "aps-delivery-count",
  kind: "aps-failure-kind",
  error: "aps-error",
  parkedAt: "aps-parked-at",
} as const;

/** A ParkedEvent from a dead-letter message's headers. */
function parkedFrom(
  id: string,
  subject: string,
  h: Record<string, string>,
  payloadBytes: number,
  timestampNanos: number,
): ParkedEvent {
  const kind = h[DLQ.kind];
  return {
    id,
    durable: h[DLQ.durable] ?? subject.split(".").pop() ?? "",
    subject: h[DLQ.subject] ?? "",
    eventId: h[DLQ.eventId] ?? "",
    deliveryCount: Number(h[DLQ.deliveryCount] ?? 0),
    kind: kind === "poison" || kind === "transient" ? kind : "unknown",
    error: h[DLQ.error] ?? "",
    parkedAt: h[DLQ.parkedAt] ?? new Date(Math.floor(timestampNanos / 1e6)).toISOString(),
    payloadBytes,
  };
}

/**
 * Handles the messages of one fetch with at most `parallel` handlers running (ConsumerSpec
 * `concurrency`, docs/design/events.md#consumers); resolves when every one has finished. `handle` acknowledges,
 * redelivers or parks its message itself; should it reject (the connection lost under an ack),
 * the first such error is thrown once every handler has finished, as the one-by-one loop would.
 */
async function handleAtOnce(
  batch: AsyncIterable<JsMsg>,
  parallel: number,
  handle: (m: JsMsg) => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  for await (const m of batch) {
    const p: Promise<void> = handle(m)
      .catch((err: unknown) => void (failure ??= { err }))
      .finally(() => running.delete(p));
    running.add(p);
    if (running.size >= parallel) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw failure.err;
}
