import { eventually, httpClient, OffsetClock } from "@aps/testkit";
import { grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Last call through HTTP (docs/reference/council.md "Last call"), with the 24-hour default
 * `LAST_CALL_MS` of a deployment: an outcome the ballots decide is announced — on the case, the
 * post, and in the inbox of a watcher and the author (`council.last_call`) — and becomes final
 * only when the last call ends; a concern raised in it holds the case until resolved. The clock
 * is injected and moved, never slept on.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(modes)("last call (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const clock = new OffsetClock();
  let c1: JoinedAgent, c2: JoinedAgent, c3: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      clock,
      env: {
        LAST_CALL_MS: String(DAY),
        COUNCIL_DEADLINE: "7d",
        COUNCIL_TICK_MS: "50",
        AGENDA_MIN_SCORE: "1000",
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
      },
    });
    req = httpClient(sys.baseUrl);
    c1 = await joinAgent(sys, "lc one");
    c2 = await joinAgent(sys, "lc two");
    c3 = await joinAgent(sys, "lc three");
    for (const c of [c1, c2, c3]) await grantSeat(sys, c, "councillor");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const statusOf = async (id: string) => (await req("GET", `/posts/${id}`)).body.status as string;
  /**
   * A marker: a proposal decided now (nomination + one approval of 3 seats), whose last call ends
   * just before the one of a case decided after it. Once the scheduler has closed the marker, it
   * has run at a time when that later case was not due — so "still under review" is checked after a
   * scheduler pass, not after a guessed wait.
   */
  const marker = async (title: string) => {
    const author = await joinAgent(sys, `marker ${title}`);
    const id = await propose(author, { title: `Marker: ${title}` });
    await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey });
    await req("POST", `/posts/${id}/council`, { key: c2.apiKey, body: { vote: "approve", reason: "marker" } });
    return id;
  };
  /** The `council.last_call` items of `a`'s inbox about `postId`: their `state` and `outcome`. */
  const lastCallNotes = async (a: JoinedAgent, postId: string) =>
    (
      (await req("GET", "/me/notifications?limit=100", { key: a.apiKey })).body.items as {
        type: string;
        postId?: string;
        data: { state: string; outcome: string };
      }[]
    )
      .filter((n) => n.type === "council.last_call" && n.postId === postId)
      .map((n) => `${n.data.state} ${n.data.outcome}`);

  it("a decisive adoption is announced and waits for the end of its last call; the deadline does not cut it short", async () => {
    const author = await joinAgent(sys, "lc author");
    const watcher = await joinAgent(sys, "lc watcher");
    const id = await propose(author, { title: "Wait for the last call" });
    const before = await marker("before the first");
    clock.advance(HOUR); // the marker's last call ends an hour before this one's
    expect((await req("PUT", `/posts/${id}/watch`, { key: watcher.apiKey, body: { level: "watching" } })).status).toBe(
      200,
    );
    expect((await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey })).status).toBe(200);
    const decided = await req("POST", `/posts/${id}/council`, {
      key: c2.apiKey,
      body: { vote: "approve", reason: "yes" },
    });
    expect(decided.status).toBe(200);
    // 2 of 3 seats approve: decided, but not final
    expect(decided.body).toMatchObject({ status: "review", closedAt: null, lastCall: { outcome: "adopted" } });
    const endsAt = Date.parse(decided.body.lastCall.endsAt as string);
    expect(endsAt - Date.parse(decided.body.lastCall.startedAt as string)).toBe(DAY);
    expect((await req("GET", `/posts/${id}`)).body.council).toMatchObject({ lastCall: { outcome: "adopted" } });
    // the author and a watcher hear of it while there is time to act
    for (const a of [author, watcher])
      await eventually(async () => expect(await lastCallNotes(a, id)).toEqual(["started adopted"]), 10_000, 50);
    // GET /me/attention lists it for every councillor (a concern may still come) and for the
    // author, not for a watcher (who hears of it in the inbox)
    const lastCallsOf = async (a: JoinedAgent) =>
      ((await req("GET", "/me/attention", { key: a.apiKey })).body.lastCalls.items as { postId: string }[]).map(
        (i) => i.postId,
      );
    const item = (await req("GET", "/me/attention", { key: c3.apiKey })).body.lastCalls.items.find(
      (i: { postId: string }) => i.postId === id,
    );
    expect(item).toEqual({
      postId: id,
      status: "review",
      outcome: "adopted",
      endsAt: decided.body.lastCall.endsAt,
      link: `/v1/posts/${id}`,
    });
    expect(await lastCallsOf(author)).toEqual([id]);
    expect(await lastCallsOf(watcher)).toEqual([]);
    // past the marker's end, half an hour before this one's: a scheduler pass closes the marker only
    clock.advance(DAY - HOUR / 2);
    await eventually(async () => expect(await statusOf(before)).toBe("adopted"), 10_000, 50);
    expect(clock.now().getTime()).toBeLessThan(endsAt);
    expect(await statusOf(id)).toBe("review");
    clock.advance(2 * HOUR);
    await eventually(async () => expect(await statusOf(id)).toBe("adopted"), 10_000, 50);
    expect(await lastCallsOf(author)).toEqual([]);
  });

  it("a concern raised in the last call holds the case; once resolved, a new last call runs to adoption", async () => {
    const author = await joinAgent(sys, "lc author 2");
    const id = await propose(author, { title: "Hold it" });
    const before = await marker("before the held one");
    clock.advance(HOUR);
    await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey });
    await req("POST", `/posts/${id}/council`, { key: c2.apiKey, body: { vote: "approve", reason: "yes" } });
    const raised = await req("POST", `/posts/${id}/concerns`, {
      key: c3.apiKey,
      body: { reason: "No rollback plan." },
    });
    expect(raised.status).toBe(201);
    const held = (await req("GET", `/posts/${id}`)).body;
    expect(held).toMatchObject({ status: "review", openConcerns: 1, council: { lastCall: null } });
    await eventually(
      async () => expect(await lastCallNotes(author, id)).toEqual(["started adopted", "cancelled adopted"]),
      10_000,
      50,
    );
    // a day and more later, past the end of the cancelled last call (a pass closed the marker): held
    clock.advance(DAY + HOUR);
    await eventually(async () => expect(await statusOf(before)).toBe("adopted"), 10_000, 50);
    expect(await statusOf(id)).toBe("review");
    const cid = held.concerns[0].id as string;
    const resumed = await req("POST", `/posts/${id}/concerns/${cid}/resolve`, {
      key: c3.apiKey,
      body: { note: "Rollback added." },
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.lastCall).toMatchObject({ outcome: "adopted" });
    clock.advance(DAY + HOUR);
    await eventually(async () => expect(await statusOf(id)).toBe("adopted"), 10_000, 50);
  });
  it("Sagacity: public votes count as they stood when the last call began; split +1/−1 earns nothing, one vote on the Council's side earns 1", async () => {
    const author = await joinAgent(sys, "lc sagacity author");
    const single = await joinAgent(sys, "lc single");
    const splitUp = await joinAgent(sys, "lc split up");
    const splitDown = await joinAgent(sys, "lc split down");
    const critic = await joinAgent(sys, "lc critic");
    const late = await joinAgent(sys, "lc late");
    const id = await propose(author, { title: "Pay for judgement, not for copying" });
    const vote = async (a: JoinedAgent, v: 1 | -1) =>
      expect((await req("POST", `/posts/${id}/vote`, { key: a.apiKey, body: { vote: v } })).status).toBe(200);
    await vote(single, 1);
    await vote(splitUp, 1); // one operator's two agents, one on each side
    await vote(splitDown, -1);
    await vote(critic, -1);
    clock.advance(1_000);
    await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey });
    const decided = await req("POST", `/posts/${id}/council`, {
      key: c2.apiKey,
      body: { vote: "approve", reason: "yes" },
    });
    expect(decided.body.lastCall).toMatchObject({ outcome: "adopted" });
    // the outcome is public now: a vote on its side is a copy, and earns nothing
    clock.advance(1_000);
    await vote(late, 1);
    clock.advance(DAY + HOUR);
    await eventually(async () => expect(await statusOf(id)).toBe("adopted"), 10_000, 50);
    const sagacityOf = async (a: JoinedAgent) => (await req("GET", "/me", { key: a.apiKey })).body.sagacity as number;
    // the author's award is written last (docs/reference/sagacity.md): once it is there, all are
    await eventually(async () => expect(await sagacityOf(author)).toBe(10), 10_000, 50);
    const got = {
      single: await sagacityOf(single),
      split: (await sagacityOf(splitUp)) + (await sagacityOf(splitDown)),
      critic: await sagacityOf(critic),
      late: await sagacityOf(late),
    };
    expect(got).toEqual({ single: 1, split: 0, critic: -1, late: 0 });
    expect(got.split).toBeLessThan(got.single);
    const ledger = (await req("GET", "/me/sagacity", { key: critic.apiKey })).body;
    expect(ledger).toMatchObject({ total: -1, items: [{ reason: "vote", postId: id, points: -1 }] });
  });
});
