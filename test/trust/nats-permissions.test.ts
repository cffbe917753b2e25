import { randomBytes } from "node:crypto";
import { connect } from "nats";
import {
  consumeEvents,
  createLogger,
  DEFAULT_STREAM_LIMITS,
  encodeEvent,
  JetStreamBus,
  NATS_OPERATOR_USER,
  NATS_USERS,
  natsAuthorizationBlock,
  subjectOf,
  type Subscription,
} from "@aps/platform";
import { events } from "@aps/proto";
import { canRunPrivateNats, eventually, startPrivateNats, type PrivateServer } from "@aps/testkit";

/**
 * NATS permissions per service (docs/design/services.md#caller-policy-and-internal-trust, docs/reliability.md "Internal
 * trust"): a private nats-server runs with exactly the `authorization` block of
 * natsAuthorizationBlock — the permissions the chart renders (test/ops/helm.test.ts compares the
 * two). The platform's JetStreamBus, as each service connects: the council's user publishes its
 * `case_closed`, identity's durable `identity-sagacity` (the Sagacity consumer) gets it and the
 * gateway's ephemeral subscription sees it; the forum's user publishing a `council.case_closed`
 * (what mints Sagacity), or another service's dead letter, and the gateway publishing any event
 * are refused and never reach the stream; no user at all cannot connect. Before, NATS had no
 * users: every one of these publishes was stored and consumed.
 */
const canRun = canRunPrivateNats();
const STREAM = "APS";
const PREFIX = "aps";

(canRun ? describe : describe.skip)(
  canRun ? "NATS users and subject permissions" : "NATS users and subject permissions (SKIPPED: no nats-server binary)",
  () => {
    let nats: PrivateServer;
    const passwords = Object.fromEntries(
      [...NATS_USERS, NATS_OPERATOR_USER].map((u) => [u, randomBytes(16).toString("hex")]),
    );
    const log = createLogger("nats-trust", "silent");
    const buses: JetStreamBus[] = [];
    const subs: Subscription[] = [];
    const busAs = async (user: string) => {
      const bus = await JetStreamBus.connect({
        servers: nats.url,
        stream: STREAM,
        prefix: PREFIX,
        connectionName: `aps-${user}`,
        user,
        pass: passwords[user],
        log,
        // the services apply the stream's limits (docs/design/events.md#stream-retention); the gateway passes none
        ...(user === "gateway" ? {} : { limits: DEFAULT_STREAM_LIMITS }),
      });
      buses.push(bus);
      return bus;
    };
    const caseClosed = (postId: string) => {
      const { eventId, payload } = encodeEvent(
        "council.case_closed",
        events.CaseClosed.fromPartial({ postId, outcome: "adopted" }),
      );
      return { subject: subjectOf({ prefix: PREFIX }, "council.case_closed"), eventId, payload, headers: {} };
    };
    /** Subjects the stream holds (and how many events on each), read with the operator's user. */
    const stored = async () => {
      const nc = await connect({ servers: nats.url, user: NATS_OPERATOR_USER, pass: passwords[NATS_OPERATOR_USER] });
      try {
        const jsm = await nc.jetstreamManager();
        return (await jsm.streams.info(STREAM, { subjects_filter: ">" })).state.subjects ?? {};
      } finally {
        await nc.close();
      }
    };

    beforeAll(async () => {
      const users = [...NATS_USERS, NATS_OPERATOR_USER].map((user) => ({ user, password: passwords[user]! }));
      nats = await startPrivateNats({ config: natsAuthorizationBlock(users, PREFIX, STREAM) });
    }, 60_000);

    afterAll(async () => {
      for (const s of subs) await s.stop();
      for (const b of buses) await b.close();
      await nats?.remove();
    });

    it("the council publishes case_closed, identity's Sagacity consumer and the gateway's subscription get it", async () => {
      const council = await busAs("council"); // creates the stream (its user may)
      const identity = await busAs("identity");
      const gateway = await busAs("gateway");
      const consumed: string[] = [];
      const seen: string[] = [];
      subs.push(
        await consumeEvents(identity, {
          durable: "identity-sagacity",
          handlers: { "council.case_closed": async (m) => void consumed.push(m.postId) },
        }),
      );
      subs.push(await gateway.subscribe([`${PREFIX}.council.>`], (e) => void seen.push(e.subject)));
      await council.publish(caseClosed("p_ok"));
      await eventually(async () => expect(consumed).toEqual(["p_ok"]), 10_000);
      await eventually(async () => expect(seen).toEqual([`${PREFIX}.council.case_closed`]), 10_000);
      const forum = await busAs("forum");
      const { eventId, payload } = encodeEvent("forum.vote_cast", events.VoteCast.fromPartial({}));
      await forum.publish({ subject: `${PREFIX}.forum.vote_cast`, eventId, payload, headers: {} });
      expect((await stored())[`${PREFIX}.forum.vote_cast`]).toBe(1);
    });

    it("the forum cannot publish the council's case_closed nor another consumer's dead letter; the gateway publishes no event", async () => {
      const forum = await busAs("forum");
      const gateway = await busAs("gateway");
      await expect(forum.publish(caseClosed("p_forged_by_forum"))).rejects.toThrow();
      await expect(
        forum.publish({ ...caseClosed("p_dlq"), subject: `${PREFIX}.dlq.identity-sagacity` }),
      ).rejects.toThrow();
      await expect(gateway.publish(caseClosed("p_forged_by_gateway"))).rejects.toThrow();
      const subjects = await stored();
      expect(subjects[`${PREFIX}.council.case_closed`]).toBe(1); // only the council's own
      expect(subjects[`${PREFIX}.dlq.identity-sagacity`]).toBeUndefined();
    }, 60_000);

    it("refuses a connection without a user or with a wrong password", async () => {
      await expect(connect({ servers: nats.url, reconnect: false })).rejects.toThrow(/Authorization/i);
      await expect(connect({ servers: nats.url, user: "forum", pass: "wrong", reconnect: false })).rejects.toThrow(
        /Authorization/i,
      );
    });
  },
);
