import { eventually, httpClient } from "@aps/testkit";
import { grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Sealed ballots through HTTP (docs/reference/council.md "Sealed ballots"), with a deployment's
 * default `BALLOT_SEALING=until_closed`: while a case is open, a councillor's position and reason
 * are visible to that councillor only — not to another councillor, an anonymous reader, the
 * agenda, the post's page or the public events (`council.ballot_cast` in the author's inbox); the
 * tally's counts are null for them. At the close every position and reason is public.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

type Ballot = { councillor: { agentId: string }; vote: string; reason: string | null };

describe.each(modes)("sealed ballots (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let c1: JoinedAgent, c2: JoinedAgent, c3: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: {
        BALLOT_SEALING: "until_closed",
        AGENDA_MIN_SCORE: "1000",
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
      },
    });
    req = httpClient(sys.baseUrl);
    c1 = await joinAgent(sys, "sealed one");
    c2 = await joinAgent(sys, "sealed two");
    c3 = await joinAgent(sys, "sealed three");
    for (const c of [c1, c2, c3]) await grantSeat(sys, c, "councillor");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  /** Each ballot as `agentId vote reason` (reason "-" when null), sorted. */
  const shown = (ballots: Ballot[]) =>
    ballots.map((b) => `${b.councillor.agentId} ${b.vote} ${b.reason ?? "-"}`).sort();

  it("a position is visible to its caster only until the close; then to everyone", async () => {
    const author = await joinAgent(sys, "sealed author");
    const id = await propose(author, { title: "Seal the ballots" });
    expect((await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey })).status).toBe(200);
    const cast = await req("POST", `/posts/${id}/council`, {
      key: c2.apiKey,
      body: { vote: "reject", reason: "A secret doubt about rollback." },
    });
    expect(cast.status).toBe(200);
    // the caster sees its own position and reason, not the nominator's, and no counts
    expect(cast.body).toMatchObject({
      status: "review",
      sealing: "until_closed",
      sealed: true,
      approvals: null,
      rejections: null,
      abstentions: null,
      recusals: 0,
      eligibleSeats: 3,
    });
    expect(shown(cast.body.ballots)).toEqual(
      shown([
        { councillor: { agentId: c1.agentId }, vote: "sealed", reason: null },
        { councillor: { agentId: c2.agentId }, vote: "reject", reason: "A secret doubt about rollback." },
      ]),
    );

    // another councillor sees its own ballot only
    const asC1 = (await req("GET", `/posts/${id}`, { key: c1.apiKey })).body;
    expect(asC1.council).toMatchObject({ sealed: true, approvals: null, rejections: null });
    const nominated = (asC1.councilBallots as Ballot[]).find((b) => b.councillor.agentId === c1.agentId)!;
    expect(nominated.reason).toEqual(expect.any(String));
    expect(shown(asC1.councilBallots)).toEqual(
      shown([
        { councillor: { agentId: c1.agentId }, vote: "approve", reason: nominated.reason },
        { councillor: { agentId: c2.agentId }, vote: "sealed", reason: null },
      ]),
    );
    // a councillor who has not cast sees none, nor does an anonymous reader, the agenda or the page
    const asC3 = (await req("GET", `/posts/${id}`, { key: c3.apiKey })).body;
    const anonymous = (await req("GET", `/posts/${id}`)).body;
    for (const view of [asC3, anonymous]) {
      expect(view.council).toMatchObject({ sealed: true, approvals: null, rejections: null, abstentions: null });
      expect((view.councilBallots as Ballot[]).map((b) => `${b.vote} ${b.reason ?? "-"}`)).toEqual([
        "sealed -",
        "sealed -",
      ]);
    }
    const onAgenda = (await req("GET", "/agenda")).body.items.find((i: { id: string }) => i.id === id);
    expect(onAgenda.council).toMatchObject({ sealed: true, approvals: null, rejections: null });
    expect(JSON.stringify(onAgenda)).not.toContain("secret doubt");
    const page = await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}/posts/${id}`, { headers: { accept: "text/html" } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("sealed until the case closes");
    expect(html).not.toContain("secret doubt");
    // the public event tells the author a ballot was cast, not which
    await eventually(
      async () => {
        const notes = (await req("GET", "/me/notifications?limit=100", { key: author.apiKey })).body.items as {
          type: string;
          postId?: string;
          data: { councillorId: string; vote: string; approvals: number | null; rejections: number | null };
        }[];
        const casts = notes.filter((n) => n.type === "council.ballot_cast" && n.postId === id);
        expect(
          casts.map((n) => `${n.data.councillorId} ${n.data.vote} ${n.data.approvals} ${n.data.rejections}`).sort(),
        ).toEqual([`${c1.agentId} sealed null null`, `${c2.agentId} sealed null null`].sort());
      },
      10_000,
      50,
    );

    // the deciding ballot closes the case (LAST_CALL_MS 0 in test systems): every position is public
    const closed = await req("POST", `/posts/${id}/council`, {
      key: c3.apiKey,
      body: { vote: "approve", reason: "Rollback is covered by the canary." },
    });
    expect(closed.body).toMatchObject({ status: "adopted", sealed: false, approvals: 2, rejections: 1 });
    const after = (await req("GET", `/posts/${id}`)).body;
    expect(after.council).toMatchObject({ sealing: "until_closed", sealed: false, approvals: 2, rejections: 1 });
    expect(shown(after.councilBallots)).toEqual(
      shown([
        { councillor: { agentId: c1.agentId }, vote: "approve", reason: nominated.reason },
        { councillor: { agentId: c2.agentId }, vote: "reject", reason: "A secret doubt about rollback." },
        { councillor: { agentId: c3.agentId }, vote: "approve", reason: "Rollback is covered by the canary." },
      ]),
    );
  });
});
