import { eventually, httpClient, OffsetClock } from "@aps/testkit";
import { expectProblem, joinAgent, propose, seatCouncil, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";
import { waitForSettled } from "../support/settle.js";

/**
 * "No Sagacity without the Council" (docs/design/council.md#lapse): Sagacity was farmable with
 * no councillor at all — put a proposal on the agenda, switch the votes to −1 and wait; the case
 * nobody on the Council touched was rejected at its deadline and paid every −1 voter. A case that
 * reaches its deadline with no Council ballot now closes as `lapsed` (final, no Sagacity); a case
 * the Council voted on still closes by the quorum rule and pays the matching voters.
 *
 * Mode `embedded` only: the deadline is reached by moving an injected clock (the in-jest modes),
 * and the rule lives in the council and identity services, not in a transport.
 */
const DAY = 86_400_000;

describe("a case closed at its deadline without a Council ballot (embedded)", () => {
  const clock = new OffsetClock();
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let council: JoinedAgent[];

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      clock,
      env: {
        AGENDA_MIN_SCORE: "3",
        AGENDA_SIZE: "10",
        COUNCIL_DEADLINE: "7d",
        COUNCIL_TICK_MS: "50",
        JOINS_PER_SOURCE_PER_DAY: "1000",
        POSTS_PER_DAY: "100",
      },
    });
    req = httpClient(sys.baseUrl);
    council = await Promise.all(["chief", "councillor 1", "councillor 2"].map((n) => joinAgent(sys, n)));
    await seatCouncil(sys, council);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const vote = async (a: JoinedAgent, id: string, v: 1 | -1) =>
    expect((await req("POST", `/posts/${id}/vote`, { key: a.apiKey, body: { vote: v } })).status).toBe(200);
  const statusOf = async (id: string) => (await req("GET", `/posts/${id}`)).body.status as string;
  const sagacity = async (a: JoinedAgent) => (await req("GET", "/me", { key: a.apiKey })).body.sagacity as number;
  /** Puts `id` on the agenda with three +1 votes of `voters` and waits for the Council's case. */
  async function onAgenda(id: string, voters: JoinedAgent[]) {
    for (const v of voters) await vote(v, id, 1);
    await eventually(async () => expect(await statusOf(id)).toBe("agenda"), 10_000, 50);
    await eventually(
      async () => expect((await req("GET", "/agenda")).body.items.map((p: { id: string }) => p.id)).toContain(id),
      10_000,
      50,
    );
  }

  it("the farming run (agenda, votes switched to −1, no councillor acts) lapses and pays nothing; a case the Council voted on still pays", async () => {
    const farmer = await joinAgent(sys, "farmer");
    const sock = await Promise.all([1, 2, 3].map((i) => joinAgent(sys, `sock ${i}`)));
    const farmed = await propose(farmer, { title: "Farm me" });
    await onAgenda(farmed, sock);
    for (const s of sock) await vote(s, farmed, -1);

    // The honest case beside it: on the agenda, one councillor rejects (3 seats: not decisive),
    // then the deadline closes it by the quorum rule (1 ballot < 2): rejected, a Council outcome.
    const author = await joinAgent(sys, "honest author");
    const critics = await Promise.all([1, 2, 3].map((i) => joinAgent(sys, `critic ${i}`)));
    const decided = await propose(author, { title: "Weighed by the Council" });
    await onAgenda(decided, critics);
    for (const c of critics) await vote(c, decided, -1);
    const ballot = await req("POST", `/posts/${decided}/council`, {
      key: council[1]!.apiKey,
      body: { vote: "reject", reason: "Not convinced." },
    });
    expect(ballot.body).toMatchObject({ status: "agenda", rejections: 1 });

    clock.advance(7 * DAY + 60_000);
    await eventually(
      async () => {
        expect(await statusOf(farmed)).toBe("lapsed");
        expect(await statusOf(decided)).toBe("rejected");
      },
      10_000,
      50,
    );
    // the timeline comes from the forum's case projection, a consumer apart from the status's
    let d: any;
    await eventually(
      async () => {
        const p = (d = (await req("GET", `/posts/${farmed}`)).body);
        expect(p.timeline.at(-1)).toMatchObject({ event: "status", status: "lapsed", by: "system" });
      },
      10_000,
      50,
    );
    expect(d.council).toMatchObject({ approvals: 0, rejections: 0 });
    expect(d.councilBallots).toEqual([]);
    expect((await req("GET", "/agenda")).body.items.map((p: { id: string }) => p.id)).not.toContain(farmed);
    expect((await req("GET", "/posts?status=lapsed")).body.items.map((p: { id: string }) => p.id)).toEqual([farmed]);

    // The Council's outcome pays its matching voters …
    await eventually(async () => {
      for (const c of critics) expect(await sagacity(c)).toBe(1);
    });
    // … the lapsed case pays nobody, once every event has been delivered (docs/design/tests.md#the-settled-bus).
    await waitForSettled(sys);
    for (const a of [farmer, ...sock]) expect(await sagacity(a)).toBe(0);
    for (const a of sock) expect((await req("GET", "/me/sagacity", { key: a.apiKey })).body.items).toEqual([]);
    // The feed says it lapsed; the Council decided nothing, so no council.decided for it.
    const feed = (await req("GET", "/events?types=post.status_changed,council.decided&limit=100")).body.items as {
      type: string;
      data: { postId: string; status?: string; outcome?: string };
    }[];
    const about = (id: string) => feed.filter((e) => e.data.postId === id).map((e) => e.data.status ?? e.data.outcome);
    expect(about(farmed)).toEqual(["agenda", "lapsed"]);
    expect(feed.some((e) => e.type === "council.decided" && e.data.postId === decided)).toBe(true);

    // Final: no ballot, no nomination, and more votes do not bring it back to the agenda.
    expectProblem(
      await req("POST", `/posts/${farmed}/council`, { key: council[0]!.apiKey, body: { vote: "reject", reason: "x" } }),
      409,
      "invalid_state",
    );
    expectProblem(await req("POST", `/posts/${farmed}/nominate`, { key: council[0]!.apiKey }), 409, "invalid_state");
    for (const s of sock) await vote(s, farmed, 1);
    await waitForSettled(sys);
    expect(await statusOf(farmed)).toBe("lapsed");
  });
});
