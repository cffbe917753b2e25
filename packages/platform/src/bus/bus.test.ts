import { hasNats, TEST_NATS_URL, uniqueBusNames, uniqueSuffix, scaled, waitUntil } from "@aps/testkit";
import { connect, nanos } from "nats";
import { createLogger } from "../log.js";
import { InProcessBus } from "./memory.js";
import { JetStreamBus } from "./jetstream.js";
import type { BusEvent, EventBus, EventHandler, Subscription } from "./types.js";
import { PoisonEventError, type ParkedEvent } from "./redelivery.js";
import { ApsError } from "../errors.js";

/**
 * The EventBus contract (docs/design/services.md#two-ways-to-run, docs/design/events.md#path-of-an-event), run unchanged against the in-process bus of the
 * all-in-one mode and against NATS JetStream (a stream and subject prefix of its own per test):
 * durable consumers get every published event with its headers, duplicate eventIds are dropped,
 * a failing handler gets the event again with a growing deliveryCount, NATS subject wildcards
 * route, and (JetStream) a durable consumer resumes where it stopped.
 */
const log = createLogger("bus-test", "silent");
const natsUp = await hasNats();
if (!natsUp) {
  console.warn(
    `\n\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n` +
      `!! bus.test.ts: NO NATS at ${TEST_NATS_URL} — the JetStreamBus contract suite is SKIPPED.\n` +
      `!! Only the InProcessBus was tested. Start nats-server -js to test the real bus.\n` +
      `!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
  );
}

/** One bus under test, plus how to get another client of the same stream and to clean up. */
interface Harness {
  bus: EventBus;
  /** A second, independent client of the same stream/prefix (a "restarted process"). */
  reconnect(): Promise<EventBus>;
  cleanup(): Promise<void>;
  /** The JetStream stream of this bus (JetStream only). */
  stream?: string;
}

interface Flavour {
  name: string;
  /** True when consumers survive being stopped (JetStream); the in-process bus forgets them. */
  durableAcrossStops: boolean;
  /** The redelivery backoff this flavour's bus is opened with, ms. */
  backoff: { baseDelayMs: number; maxDelayMs: number };
  open(): Promise<Harness>;
}

const inProcess: Flavour = {
  name: "InProcessBus",
  durableAcrossStops: false,
  backoff: { baseDelayMs: 5, maxDelayMs: 20 },
  open: async () => {
    const prefix = `t${uniqueSuffix()}.aps`;
    const bus = new InProcessBus(log, prefix, 120_000, inProcess.backoff);
    return {
      bus,
      reconnect: async () => {
        throw new Error("the in-process bus has no second client");
      },
      cleanup: () => bus.close(),
    };
  },
};

const jetStream: Flavour = {
  name: "JetStreamBus",
  durableAcrossStops: true,
  backoff: { baseDelayMs: 100, maxDelayMs: 200 },
  open: async () => {
    const { stream, prefix } = uniqueBusNames();
    const opts = {
      servers: TEST_NATS_URL,
      stream,
      prefix,
      connectionName: "aps-bus-test",
      redelivery: jetStream.backoff,
      log,
    };
    const bus = await JetStreamBus.connect(opts);
    const others: JetStreamBus[] = [];
    return {
      bus,
      stream,
      reconnect: async () => {
        const b = await JetStreamBus.connect(opts);
        others.push(b);
        return b;
      },
      cleanup: async () => {
        // Delete through a client that is still open (a test may have closed the first one).
        const live = await JetStreamBus.connect(opts);
        await live.deleteStream();
        await live.close();
        for (const b of others) await b.close();
        await bus.close();
      },
    };
  },
};

const flavours = natsUp ? [inProcess, jetStream] : [inProcess];

/** Looks at `cond` every 20 ms until it holds; throws with `what` after `ms` (× TEST_TIME_SCALE). */
async function waitFor(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  await waitUntil(what, cond, { timeoutMs: ms, intervalMs: 20 });
}

/** Polls the bus's dead-letter queue until it holds `n` events; returns them. */
async function parkedSoon(bus: EventBus, n: number, ms = 10_000): Promise<ParkedEvent[]> {
  return waitUntil(
    `${n} parked events`,
    async () => {
      const list = await bus.deadLetters!.list();
      if (list.length < n) throw new Error(`have ${list.length}`);
      return list;
    },
    { timeoutMs: ms, intervalMs: 100 },
  );
}

/** The lag of each running consumer of `bus` (aps_consumer_pending; both buses have it). */
function lagOf(bus: EventBus): Promise<Record<string, number>> {
  return (bus as unknown as { pending(): Promise<Record<string, number>> }).pending();
}

/**
 * Waits until every running consumer of `bus` has handled and acknowledged (or parked) everything
 * published so far: no delivery queued, in flight or waiting for a redelivery. Only then does
 * "nothing more was delivered" hold — a sleep would not prove it.
 */
async function settled(bus: EventBus, ms = 10_000): Promise<void> {
  await waitUntil(
    "every consumer to settle (nothing pending or unacknowledged)",
    async () => {
      const lag = await lagOf(bus);
      if (Object.values(lag).some((n) => n !== 0)) throw new Error(`pending ${JSON.stringify(lag)}`);
      return true;
    },
    { timeoutMs: ms, intervalMs: 20 },
  );
}

let seq = 0;
/** A fresh event on `subject` with a unique id and a recognisable payload. */
function event(subject: string, headers: Record<string, string> = {}): BusEvent {
  const eventId = `01TEST${String(++seq).padStart(6, "0")}${uniqueSuffix()}`.toUpperCase();
  return { subject, eventId, payload: new TextEncoder().encode(`payload of ${eventId}`), headers };
}

/** A handler that records every delivery. */
function recorder() {
  const got: { event: BusEvent; deliveryCount: number }[] = [];
  const handler: EventHandler = async (e, meta) => {
    got.push({ event: e, deliveryCount: meta.deliveryCount });
  };
  return { got, handler, ids: () => got.map((g) => g.event.eventId) };
}

describe.each(flavours)("EventBus contract: $name", (flavour) => {
  let h: Harness;
  let p: string;
  const subs: Subscription[] = [];
  /** Lets go of handlers a test holds on a gate (so that its consumers can stop when it failed). */
  let afterGate: (() => void) | undefined;

  beforeEach(async () => {
    h = await flavour.open();
    p = h.bus.prefix;
  });
  afterEach(async () => {
    afterGate?.();
    afterGate = undefined;
    for (const s of subs.splice(0)) await s.stop().catch(() => undefined);
    await h.cleanup();
  });

  it("delivers a published event to a durable consumer with its id, payload and headers", async () => {
    const r = recorder();
    subs.push(await h.bus.consume({ durable: "headers", subjects: [`${p}.forum.post_created`], handler: r.handler }));
    const e = event(`${p}.forum.post_created`, {
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      tracestate: "vendor=value",
      "aps-event-type": "forum.post_created",
    });
    await h.bus.publish(e);
    await waitFor("the event", () => r.got.length >= 1);
    await settled(h.bus);
    expect(r.got).toHaveLength(1);
    const got = r.got[0]!;
    expect(got.event.subject).toBe(`${p}.forum.post_created`);
    expect(got.event.eventId).toBe(e.eventId);
    expect(new TextDecoder().decode(got.event.payload)).toBe(`payload of ${e.eventId}`);
    expect(got.event.headers).toMatchObject({
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      tracestate: "vendor=value",
      "aps-event-type": "forum.post_created",
    });
    expect(got.deliveryCount).toBe(1);
  });

  it("delivers an eventId published twice only once", async () => {
    const r = recorder();
    subs.push(await h.bus.consume({ durable: "dedupe", subjects: [`${p}.forum.>`], handler: r.handler }));
    const e = event(`${p}.forum.vote_cast`);
    await h.bus.publish(e);
    // A relay retry after a crash re-publishes the same row (same id, same bytes).
    await h.bus.publish({ ...e, payload: new Uint8Array(e.payload), headers: { ...e.headers } });
    const after = event(`${p}.forum.vote_cast`);
    await h.bus.publish(after);
    await h.bus.publish(after);
    const sentinel = event(`${p}.forum.sentinel`);
    await h.bus.publish(sentinel);
    await waitFor("the sentinel", () => r.ids().includes(sentinel.eventId));
    await settled(h.bus);
    expect(r.ids()).toEqual([e.eventId, after.eventId, sentinel.eventId]);
  });

  it("redelivers to a failing handler with deliveryCount 1, 2, 3 until it succeeds", async () => {
    const counts: number[] = [];
    let handled = 0;
    subs.push(
      await h.bus.consume({
        durable: "flaky",
        subjects: [`${p}.council.case_closed`],
        maxDeliver: 5,
        handler: async (_e, { deliveryCount }) => {
          counts.push(deliveryCount);
          if (counts.length <= 2) throw new Error(`transient failure ${counts.length}`);
          handled++;
        },
      }),
    );
    await h.bus.publish(event(`${p}.council.case_closed`));
    await waitFor("the third delivery", () => handled === 1);
    // Acknowledged after the success: no fourth delivery.
    await settled(h.bus);
    expect(counts).toEqual([1, 2, 3]);
    expect(handled).toBe(1);
  });

  it("keeps redelivering through an outage (transient errors) past maxDeliver, with growing delays", async () => {
    const at: number[] = [];
    subs.push(
      await h.bus.consume({
        durable: "outage",
        subjects: [`${p}.council.case_closed`],
        maxDeliver: 2,
        handler: async () => {
          at.push(Date.now());
          if (at.length <= 6)
            throw new ApsError("upstream_unavailable", "a backing service is unavailable; retry later", 1);
        },
      }),
    );
    const e = event(`${p}.council.case_closed`);
    await h.bus.publish(e);
    await waitFor("the seventh delivery", () => at.length === 7);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // Capped exponential backoff: gap n is at least min(cap, base·2^(n−1)). A loaded machine
    // lengthens a gap, so the policy's own delays are the lower bounds, with 5 % slack and 2 ms for
    // the clock: Date.now() counts whole ms, and a timer runs from libuv's loop time, cached when
    // the loop iteration began, so it may fire up to that staleness early by Date.now() (the
    // node 24 leg saw the second gap, a 10 ms delay, under 9.5 ms on a loaded machine). The in-process bus's delays
    // are 5–20 ms: no backoff at all would give gaps of about 0–1 ms, far below these floors.
    const { baseDelayMs, maxDelayMs } = flavour.backoff;
    const floors = gaps.map((_, i) => Math.min(maxDelayMs, baseDelayMs * 2 ** i) * 0.95 - 2);
    expect(gaps.map((g, i) => g >= floors[i]!)).toEqual(gaps.map(() => true));
    expect(Math.max(...gaps.slice(2))).toBeGreaterThanOrEqual(maxDelayMs * 0.95);
    expect(await h.bus.deadLetters!.list()).toEqual([]);
  });

  it("parks a poison event at once, lists it, and replays it to its consumer", async () => {
    let deliveries = 0;
    let poisoned = true;
    const handled: string[] = [];
    subs.push(
      await h.bus.consume({
        durable: "poisoned",
        subjects: [`${p}.forum.post_created`],
        handler: async (ev) => {
          deliveries++;
          if (poisoned) throw new PoisonEventError("cannot decode");
          handled.push(ev.eventId);
        },
      }),
    );
    const e = event(`${p}.forum.post_created`);
    await h.bus.publish(e);
    const parked = await parkedSoon(h.bus, 1);
    expect(deliveries).toBe(1);
    expect(parked[0]).toMatchObject({
      durable: "poisoned",
      subject: e.subject,
      eventId: e.eventId,
      kind: "poison",
      deliveryCount: 1,
      payloadBytes: e.payload.length,
    });
    expect(parked[0]!.error).toContain("cannot decode");
    poisoned = false;
    expect(await h.bus.deadLetters!.replay(parked[0]!.id)).toBe(true);
    await waitFor("the replayed event", () => handled.length === 1);
    expect(handled).toEqual([e.eventId]);
    expect(await h.bus.deadLetters!.list()).toEqual([]);
    expect(await h.bus.deadLetters!.replay(parked[0]!.id)).toBe(false);
  });

  it("parks an event failing with an unclassified error after maxDeliver deliveries", async () => {
    let deliveries = 0;
    subs.push(
      await h.bus.consume({
        durable: "buggy",
        subjects: [`${p}.forum.post_created`],
        maxDeliver: 3,
        handler: async () => {
          deliveries++;
          throw new TypeError("x is undefined");
        },
      }),
    );
    await h.bus.publish(event(`${p}.forum.post_created`));
    const parked = await parkedSoon(h.bus, 1);
    expect(parked[0]).toMatchObject({ durable: "buggy", kind: "unknown", deliveryCount: 3 });
    // terminated once parked: nothing pending, so no fourth delivery can come
    await settled(h.bus);
    expect(deliveries).toBe(3);
  });

  it("routes by subject filters with * and > wildcards, also with several filters per consumer", async () => {
    const forumAny = recorder();
    const anyVote = recorder();
    const everything = recorder();
    const exact = recorder();
    const multi = recorder();
    subs.push(await h.bus.consume({ durable: "forum-any", subjects: [`${p}.forum.*`], handler: forumAny.handler }));
    subs.push(await h.bus.consume({ durable: "any-vote", subjects: [`${p}.*.vote_cast`], handler: anyVote.handler }));
    subs.push(await h.bus.consume({ durable: "everything", subjects: [`${p}.>`], handler: everything.handler }));
    subs.push(await h.bus.consume({ durable: "exact", subjects: [`${p}.forum.vote_cast`], handler: exact.handler }));
    subs.push(
      await h.bus.consume({
        durable: "multi",
        subjects: [`${p}.identity.*`, `${p}.council.>`],
        handler: multi.handler,
      }),
    );

    const forumVote = event(`${p}.forum.vote_cast`);
    const forumPost = event(`${p}.forum.post_created`);
    const councilVote = event(`${p}.council.vote_cast`);
    const joined = event(`${p}.identity.agent_joined`);
    const deep = event(`${p}.council.case.closed`);
    const forumDeep = event(`${p}.forum.post.deleted`);
    for (const e of [forumVote, forumPost, councilVote, joined, deep, forumDeep]) await h.bus.publish(e);

    await waitFor("all events on the > consumer", () => everything.got.length >= 6);
    await waitFor("the multi-filter consumer", () => multi.got.length >= 3);
    // every consumer has had every event its filters match: what it did not get is not coming
    await settled(h.bus);
    const sorted = (ids: string[]) => [...ids].sort();
    expect(sorted(forumAny.ids())).toEqual(sorted([forumVote.eventId, forumPost.eventId]));
    expect(sorted(anyVote.ids())).toEqual(sorted([forumVote.eventId, councilVote.eventId]));
    expect(sorted(everything.ids())).toEqual(
      sorted([forumVote, forumPost, councilVote, joined, deep, forumDeep].map((e) => e.eventId)),
    );
    expect(exact.ids()).toEqual([forumVote.eventId]);
    expect(sorted(multi.ids())).toEqual(sorted([councilVote.eventId, joined.eventId, deep.eventId]));
    // Every delivery carries the full subject it was published on.
    for (const g of everything.got) {
      const sent = [forumVote, forumPost, councilVote, joined, deep, forumDeep].find(
        (e) => e.eventId === g.event.eventId,
      );
      expect(g.event.subject).toBe(sent!.subject);
    }
  });

  it("delivers events of one subject to one consumer in publish order", async () => {
    const r = recorder();
    subs.push(await h.bus.consume({ durable: "ordered", subjects: [`${p}.forum.vote_cast`], handler: r.handler }));
    const sent = Array.from({ length: 20 }, () => event(`${p}.forum.vote_cast`));
    for (const e of sent) await h.bus.publish(e);
    await waitFor("20 events", () => r.got.length >= 20);
    expect(r.ids()).toEqual(sent.map((e) => e.eventId));
  });

  it("an ephemeral subscription gets each matching event once, alongside durable consumers, and nothing after stop", async () => {
    const durable = recorder();
    subs.push(await h.bus.consume({ durable: "beside", subjects: [`${p}.forum.>`], handler: durable.handler }));
    const got: BusEvent[] = [];
    const other: BusEvent[] = [];
    const sub = await h.bus.subscribe([`${p}.forum.>`, `${p}.identity.key_rotated`], (e) => {
      got.push(e);
    });
    // A second subscriber (another gateway replica) gets the same events: no load sharing.
    subs.push(await h.bus.subscribe([`${p}.forum.*`], (e) => void other.push(e)));
    // A throwing subscriber neither blocks the publisher nor the others.
    subs.push(
      await h.bus.subscribe([`${p}.forum.>`], () => {
        throw new Error("subscriber bug");
      }),
    );
    const vote = event(`${p}.forum.vote_cast`, { "aps-event-type": "forum.vote_cast" });
    const rotated = event(`${p}.identity.key_rotated`);
    const ignored = event(`${p}.council.case_closed`);
    for (const e of [vote, rotated, ignored]) await h.bus.publish(e);
    await waitFor("both events on the ephemeral subscription", () => got.length >= 2);
    await waitFor("the vote on the second subscriber", () => other.length >= 1);
    await waitFor("the vote on the durable consumer", () => durable.got.length >= 1);
    expect(got.map((e) => e.eventId)).toEqual([vote.eventId, rotated.eventId]);
    expect(got[0]!.subject).toBe(vote.subject);
    expect(new TextDecoder().decode(got[0]!.payload)).toBe(`payload of ${vote.eventId}`);
    expect(got[0]!.headers["aps-event-type"]).toBe("forum.vote_cast");
    expect(other.map((e) => e.eventId)).toEqual([vote.eventId]);

    await sub.stop();
    const after = event(`${p}.forum.post_created`);
    await h.bus.publish(after);
    await waitFor("the later event on the second subscriber", () => other.length >= 2);
    // a marker after it on the same connection: every event before it has been dispatched
    const marker = event(`${p}.forum.marker`);
    await h.bus.publish(marker);
    await waitFor("the marker on the second subscriber", () => other.length >= 3);
    expect(other.map((e) => e.eventId)).toEqual([vote.eventId, after.eventId, marker.eventId]);
    expect(got.map((e) => e.eventId)).toEqual([vote.eventId, rotated.eventId]);
  });

  it("counts deliveries not yet handled as pending (aps_consumer_pending), and 0 once every one is handled", async () => {
    const subject = `${p}.forum.vote_cast`;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const r = recorder();
    subs.push(
      await h.bus.consume({
        durable: "lagging",
        subjects: [subject],
        handler: async (e, meta) => (await gate, r.handler(e, meta)),
      }),
    );
    const lag = () => lagOf(h.bus);
    expect(await lag()).toEqual({ lagging: 0 });
    const published = Promise.all([event(subject), event(subject), event(subject)].map((e) => h.bus.publish(e)));
    /** Waits until the lag is `n`, saying what it was last. */
    const lagReaches = (n: number) =>
      waitUntil(
        `pending to be ${n}`,
        async () => {
          const now = await lag();
          if (now.lagging !== n) throw new Error(`pending ${JSON.stringify(now)}`);
          return true;
        },
        { timeoutMs: 5_000, intervalMs: 20 },
      );
    await lagReaches(3);
    release();
    await published;
    await waitFor("the three deliveries", () => r.got.length === 3);
    await lagReaches(0);
  });

  it("handles up to `concurrency` events of a subject at once, acknowledging each after its handler (docs/design/events.md#consumers)", async () => {
    const subject = `${p}.forum.vote_cast`;
    let active = 0;
    let most = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const deliveries = new Map<string, number>();
    // a run that never has 4 at once fails below, and its held handlers are let go with it
    afterGate = release;
    const done = new Set<string>();
    const events = Array.from({ length: 20 }, () => event(subject));
    const failOnce = events[5]!.eventId;
    const started: string[] = [];
    // JetStream: all 20 stored before the consumer starts, so its first pull takes them in one
    // batch and 4 can be in hand at once whatever the machine's pace (a pull that ended with fewer
    // would hold them on the gate for good). The in-process bus keeps nothing for a consumer not
    // yet running: there the 20 are published at once after it started.
    if (flavour.durableAcrossStops) for (const e of events) await h.bus.publish(e);
    subs.push(
      await h.bus.consume({
        durable: "at-once",
        subjects: [subject],
        concurrency: { [subject]: 4 },
        handler: async (e) => {
          deliveries.set(e.eventId, (deliveries.get(e.eventId) ?? 0) + 1);
          started.push(e.eventId);
          active++;
          most = Math.max(most, active);
          if (active >= 4) release();
          await gate;
          active--;
          if (e.eventId === failOnce && deliveries.get(e.eventId) === 1) throw new Error("transient failure");
          done.add(e.eventId);
        },
      }),
    );
    const published = flavour.durableAcrossStops ? Promise.resolve() : Promise.all(events.map((e) => h.bus.publish(e)));
    await waitFor("4 handlers running at once", () => most >= 4, 15_000);
    await waitFor("every event handled", () => done.size === 20, 15_000);
    await published;
    // every delivery acknowledged: no further delivery can come
    await settled(h.bus);
    expect(most).toBe(4);
    expect(deliveries.get(failOnce)).toBe(2);
    expect([...deliveries.values()].reduce((x, y) => x + y, 0)).toBe(21);
    expect(await (h.bus as JetStreamBus).pending()).toEqual({ "at-once": 0 });
    // first deliveries start in publish order (the stream's order)
    const firsts = started.filter((id, i) => started.indexOf(id) === i);
    expect(firsts).toEqual(events.map((e) => e.eventId));
  });

  if (flavour.durableAcrossStops) {
    it("an ephemeral subscription creates no consumer on the stream", async () => {
      const js = h.bus as JetStreamBus;
      subs.push(await js.subscribe([`${p}.>`], () => undefined));
      expect(await js.pending()).toEqual({});
      expect(await js.consumerNames()).toEqual([]);
    });

    it("resumes a stopped durable consumer with the events published while it was stopped", async () => {
      const subject = `${p}.forum.comment_added`;
      const first = recorder();
      const sub = await h.bus.consume({ durable: "resumer", subjects: [subject], handler: first.handler });
      const before = event(subject);
      await h.bus.publish(before);
      await waitFor("the event before the stop", () => first.got.length === 1);
      await sub.stop();

      const whileStopped = [event(subject), event(subject), event(subject)];
      for (const e of whileStopped) await h.bus.publish(e);
      // the stop awaited the pull loop's end: nothing calls the first handler any more
      expect(first.ids()).toEqual([before.eventId]);

      const second = recorder();
      subs.push(await h.bus.consume({ durable: "resumer", subjects: [subject], handler: second.handler }));
      // Well below the 30 s ack wait: nothing may be parked on the stopped consumer's pull.
      await waitFor("the events published while stopped", () => second.got.length >= 3, 5_000);
      // every delivery acknowledged, the one before the stop included: nothing more can come
      await settled(h.bus);
      // The acknowledged event is not delivered again; the others arrive in order.
      expect(second.ids()).toEqual(whileStopped.map((e) => e.eventId));
      expect(first.ids()).toEqual([before.eventId]);
    });

    it("resumes a durable consumer from another connection (a restarted process)", async () => {
      const subject = `${p}.identity.agent_joined`;
      const first = recorder();
      const sub = await h.bus.consume({
        durable: "restarted",
        subjects: [subject, `${p}.identity.key_rotated`],
        handler: first.handler,
      });
      const before = event(subject);
      await h.bus.publish(before);
      await waitFor("the event before the stop", () => first.got.length === 1);
      await sub.stop();
      await h.bus.close();

      const other = await h.reconnect();
      const whileDown = [event(subject), event(`${p}.identity.key_rotated`)];
      for (const e of whileDown) await other.publish(e);
      const second = recorder();
      subs.push(
        await other.consume({
          durable: "restarted",
          subjects: [subject, `${p}.identity.key_rotated`],
          handler: second.handler,
        }),
      );
      await waitFor("the events published while down", () => second.got.length >= 2, 5_000);
      await settled(other);
      expect([...second.ids()].sort()).toEqual(whileDown.map((e) => e.eventId).sort());
    });

    it("sets ack_wait (ackWaitMs) on a new durable, updates an existing one, and redelivers an unacknowledged delivery after it", async () => {
      const js = h.bus as JetStreamBus;
      const stream = h.stream!;
      const subject = `${p}.council.case_closed`;
      const nc = await connect({ servers: TEST_NATS_URL });
      try {
        const jsm = await nc.jetstreamManager();
        const ackWaitOf = async (durable: string) => (await jsm.consumers.info(stream, durable)).config.ack_wait;
        // the default: 30 s
        const sub = await js.consume({ durable: "waiter", subjects: [subject], handler: async () => undefined });
        expect(await ackWaitOf("waiter")).toBe(nanos(30_000));
        await sub.stop();
        // another process of the same durable with NATS_ACK_WAIT_MS=1500: the existing consumer is updated
        const short = await JetStreamBus.connect({
          servers: TEST_NATS_URL,
          stream,
          prefix: p,
          connectionName: "aps-bus-test-short",
          ackWaitMs: 1_500,
          log,
        });
        try {
          const r = recorder();
          const s2 = await short.consume({ durable: "waiter", subjects: [subject], handler: r.handler });
          expect(await ackWaitOf("waiter")).toBe(nanos(1_500));
          await s2.stop();
          // a delivery taken and never acknowledged (a process that died holding it) comes again after ack_wait
          const e = event(subject);
          await js.publish(e);
          const held = await (await nc.jetstream().consumers.get(stream, "waiter")).next({ expires: 2_000 });
          expect(held?.headers?.get("Nats-Msg-Id")).toBe(e.eventId);
          const takenAt = Date.now();
          subs.push(await short.consume({ durable: "waiter", subjects: [subject], handler: r.handler }));
          await waitFor("the redelivery after ack_wait", () => r.got.length === 1, 10_000);
          const afterMs = Date.now() - takenAt;
          expect(r.got[0]).toMatchObject({ deliveryCount: 2, event: { eventId: e.eventId } });
          expect(afterMs).toBeGreaterThanOrEqual(1_000);
          // a bound on a hang (ack_wait is 1.5 s), stretched on a loaded machine (docs/design/tests.md)
          expect(afterMs).toBeLessThan(scaled(5_000));
        } finally {
          for (const s of subs.splice(0)) await s.stop().catch(() => undefined);
          await short.close();
        }
      } finally {
        await nc.close();
      }
    });
  } else {
    it("stops delivering to a stopped consumer and lets the same durable name start again", async () => {
      const subject = `${p}.forum.comment_added`;
      const first = recorder();
      const sub = await h.bus.consume({ durable: "resumer", subjects: [subject], handler: first.handler });
      await h.bus.publish(event(subject));
      await sub.stop();
      await h.bus.publish(event(subject));
      const second = recorder();
      subs.push(await h.bus.consume({ durable: "resumer", subjects: [subject], handler: second.handler }));
      const later = event(subject);
      await h.bus.publish(later);
      expect(first.got).toHaveLength(1);
      expect(second.ids()).toContain(later.eventId);
    });
  }
});

/**
 * The in-process bus keeps who gets each subject once it was published (InProcessBus `routes`):
 * consumers and subscribers that come after a subject's first event get its next ones, and one
 * that stops gets no more.
 */
describe("InProcessBus routes", () => {
  it("a consumer or subscriber that arrives after a subject was published gets its later events; a stopped one none", async () => {
    const bus = new InProcessBus(log, "routes");
    const subject = "routes.forum.vote_cast";
    await bus.publish(event(subject));
    const late = recorder();
    const c = await bus.consume({ durable: "late", subjects: ["routes.forum.*"], handler: late.handler });
    const second = event(subject);
    await bus.publish(second);
    expect(late.ids()).toEqual([second.eventId]);
    const heard: string[] = [];
    const s = await bus.subscribe(["routes.forum.>"], (e) => void heard.push(e.eventId));
    const third = event(subject);
    await bus.publish(third);
    expect(heard).toEqual([third.eventId]);
    expect(late.ids()).toEqual([second.eventId, third.eventId]);
    await c.stop();
    await bus.publish(event(subject));
    expect(late.ids()).toHaveLength(2);
    expect(heard).toHaveLength(2);
    await s.stop();
    await bus.publish(event(subject));
    expect(heard).toHaveLength(2);
    await bus.close();
  });
});
