import { eventually, httpClient, OffsetClock } from "@aps/testkit";
import { grantSeat, joinAgent, propose, revokeSeat, type JoinedAgent } from "../support/fixtures.js";
import { waitForSettled } from "../support/settle.js";
import { availableModes, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * The proposal lifecycle of the seed's "States and transitions" through HTTP (docs/design/council.md#statuses-and-the-lifecycle-rule):
 * every transition, every refusal, the close rules (decisive majority, deadline with and
 * without quorum, ties), the heat rule onto the agenda, and Sagacity on close. Deadlines are
 * reached by moving an injected clock, not by sleeping.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const DAY = 86_400_000;
const HOUR = 3_600_000;

type Agent = JoinedAgent;

describe.each(modes)("Council lifecycle (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const clock = new OffsetClock();
  let councillors: Agent[] = [];
  let chief: Agent;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      clock,
      env: {
        AGENDA_MIN_SCORE: "3",
        AGENDA_SIZE: "10",
        COUNCIL_DEADLINE: "7d",
        COUNCIL_TICK_MS: "50",
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
      },
    });
    req = httpClient(sys.baseUrl);
    chief = await joinAgent(sys, "chief");
    await grantSeat(sys, chief, "chief");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  /** Makes the Council exactly `n` seats: the chief plus n−1 councillors. */
  async function councilOf(n: number): Promise<Agent[]> {
    for (const c of councillors) await revokeSeat(sys, c, "councillor");
    councillors = [];
    for (let i = 1; i < n; i++) {
      const c = await joinAgent(sys, `councillor ${n}-${i}`);
      await grantSeat(sys, c, "councillor");
      councillors.push(c);
    }
    return [chief, ...councillors];
  }
  const ballot = (c: Agent, id: string, vote: string, reason = `${vote} because`) =>
    req("POST", `/posts/${id}/council`, { key: c.apiKey, body: { vote, reason } });
  async function statusOf(id: string) {
    return (await req("GET", `/posts/${id}`)).body.status as string;
  }
  async function sagacity(a: Agent) {
    return (await req("GET", "/me", { key: a.apiKey })).body.sagacity as number;
  }

  it("walks nominate → review → adopted → implementing → completed, with ballots, hand-off, timeline and Sagacity", async () => {
    const [c1, c2] = await councilOf(3);
    const author = await joinAgent(sys, "author");
    const voters = await Promise.all(["v1", "v2", "v3", "v4"].map((n) => joinAgent(sys, n)));
    const id = await propose(author, { title: "Adopt me" });
    // v1, v2 agree; v3 disagrees; v4 votes only after the close
    await req("POST", `/posts/${id}/vote`, { key: voters[0]!.apiKey, body: { vote: 1 } });
    await req("POST", `/posts/${id}/vote`, { key: voters[1]!.apiKey, body: { vote: -1 } });
    await req("POST", `/posts/${id}/vote`, { key: voters[1]!.apiKey, body: { vote: 1 } });
    await req("POST", `/posts/${id}/vote`, { key: voters[2]!.apiKey, body: { vote: -1 } });

    const nom = await req("POST", `/posts/${id}/nominate`, { key: c1!.apiKey });
    expect(nom.status).toBe(200);
    expect(nom.body).toMatchObject({ status: "review", seats: 3, approvals: 1, rejections: 0 });
    expect(nom.body.ballots).toEqual([
      expect.objectContaining({ councillor: { agentId: c1!.agentId, name: c1!.name }, vote: "approve" }),
    ]);
    expect(await statusOf(id)).toBe("review");

    const adopt = await ballot(c2!, id, "approve", "Clear need, small cost.");
    expect(adopt.status).toBe(200);
    expect(adopt.body).toMatchObject({ status: "adopted", approvals: 2 });
    expect(adopt.body.closedAt).not.toBeNull();
    // read-your-writes: the detail shows the new status at once
    const detail = (await req("GET", `/posts/${id}`)).body;
    expect(detail.status).toBe("adopted");
    expect(detail.councilBallots.map((b: { reason: string }) => b.reason)).toEqual([
      "Nominated for Council review.",
      "Clear need, small cost.",
    ]);

    // after the close: v4 votes +1 and v3 flips to +1 — neither counts
    await req("POST", `/posts/${id}/vote`, { key: voters[3]!.apiKey, body: { vote: 1 } });
    await req("POST", `/posts/${id}/vote`, { key: voters[2]!.apiKey, body: { vote: 1 } });

    const h = await req("POST", `/posts/${id}/handoff`, {
      key: chief.apiKey,
      body: { implementation: "task", executor: "platform-team" },
    });
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({
      status: "implementing",
      handoff: { implementation: "task", executor: "platform-team", by: chief.agentId },
    });
    const done = await req("POST", `/posts/${id}/complete`, { key: chief.apiKey });
    expect(done.body.status).toBe("completed");

    const final = (await req("GET", `/posts/${id}`)).body;
    expect(final.timeline.map((t: { status: string }) => t.status)).toEqual([
      "open",
      "review",
      "adopted",
      "implementing",
      "completed",
    ]);
    expect(final.timeline.map((t: { by: string }) => t.by)).toEqual([
      author.agentId,
      c1!.agentId,
      c2!.agentId,
      chief.agentId,
      chief.agentId,
    ]);
    expect(final.handoff).toMatchObject({ implementation: "task", executor: "platform-team" });

    await eventually(
      async () => {
        expect(await sagacity(author)).toBe(10);
        expect(await sagacity(voters[0]!)).toBe(1);
        expect(await sagacity(voters[1]!)).toBe(1);
      },
      10_000,
      50,
    );
    expect(await sagacity(voters[2]!)).toBe(-1); // against the outcome
    expect(await sagacity(voters[3]!)).toBe(0);
    const history = (await req("GET", "/me/sagacity", { key: author.apiKey })).body;
    expect(history).toMatchObject({ total: 10, items: [{ reason: "adoption", postId: id, points: 10 }] });
    // the forum's list shows the projected status once the events arrive
    await eventually(
      async () => {
        const list = (await req("GET", "/posts?kind=arch&sort=new&limit=100")).body.items;
        expect(list.find((p: { id: string }) => p.id === id)?.status).toBe("completed");
      },
      10_000,
      50,
    );
    const profile = (await req("GET", `/agents/${author.agentId}`)).body;
    expect(profile).toMatchObject({ agentId: author.agentId, sagacity: 10, counts: { posts: 1 } });
  });

  it("refuses the wrong seat, the wrong stage and bad values", async () => {
    const [, c1, c2] = await councilOf(3); // two councillors without the chief's seat
    const author = await joinAgent(sys, "refusals");
    const id = await propose(author);
    const free = (
      await req("POST", "/posts", { key: author.apiKey, body: { title: "chat", body: "x", is_arch_design: false } })
    ).body.id;

    const codes = async (p: Promise<{ status: number; body: { code: string } }>) => {
      const r = await p;
      return `${r.status} ${r.body.code}`;
    };
    expect(await codes(req("POST", `/posts/${id}/nominate`))).toBe("401 unauthenticated");
    expect(await codes(req("POST", `/posts/${id}/nominate`, { key: author.apiKey }))).toBe("403 forbidden");
    expect(await codes(ballot(author, id, "approve"))).toBe("403 forbidden");
    expect(
      await codes(req("POST", `/posts/${id}/handoff`, { key: c1!.apiKey, body: { implementation: "self" } })),
    ).toBe("403 forbidden");
    expect(await codes(req("POST", `/posts/${id}/complete`, { key: c1!.apiKey }))).toBe("403 forbidden");
    expect(await codes(ballot(c1!, id, "approve"))).toBe("409 invalid_state");
    expect(await codes(req("POST", `/posts/${free}/nominate`, { key: c1!.apiKey }))).toBe("409 invalid_state");
    expect(await codes(req("POST", `/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/nominate`, { key: c1!.apiKey }))).toBe(
      "404 not_found",
    );
    expect(
      await codes(req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: { implementation: "self" } })),
    ).toBe("409 invalid_state");

    expect((await req("POST", `/posts/${id}/nominate`, { key: c1!.apiKey })).status).toBe(200);
    expect(await codes(req("POST", `/posts/${id}/nominate`, { key: c2!.apiKey }))).toBe("409 invalid_state");
    expect(await codes(ballot(c2!, id, "maybe"))).toBe("400 invalid_request");
    expect(await codes(ballot(c2!, id, "approve", ""))).toBe("400 invalid_request");
    expect(await codes(ballot(c2!, id, "approve", "   "))).toBe("400 invalid_request");
    expect(
      await codes(
        req("POST", `/posts/${id}/council`, { key: c2!.apiKey, body: { vote: "approve", reason: "ok", extra: 1 } }),
      ),
    ).toBe("400 invalid_request");
    expect(await codes(req("POST", `/posts/${id}/complete`, { key: chief.apiKey }))).toBe("409 invalid_state");
    expect(
      await codes(req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: { implementation: "self" } })),
    ).toBe("409 invalid_state");
    // none of the refused ballots counted
    const c = (await req("GET", `/posts/${id}`)).body;
    expect(c.councilBallots).toHaveLength(1);
    expect(c.status).toBe("review");

    expect((await ballot(c2!, id, "approve")).body.status).toBe("adopted");
    expect(await codes(ballot(c2!, id, "reject"))).toBe("409 invalid_state");
    expect(
      await codes(req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: { implementation: "robots" } })),
    ).toBe("400 invalid_request");
    expect(
      await codes(
        req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: { implementation: "self", executor: 7 } }),
      ),
    ).toBe("400 invalid_request");
    expect(
      (await req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: { implementation: "self" } })).body,
    ).toMatchObject({ status: "implementing", handoff: { executor: null } });
    expect(
      await codes(req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: { implementation: "task" } })),
    ).toBe("409 invalid_state");
  });

  it("rejects at once when approval can no longer reach a majority, and a tie is a rejection", async () => {
    const [c1, c2, c3, c4] = await councilOf(4);
    const author = await joinAgent(sys, "reject me");
    const against = await joinAgent(sys, "against");
    const id = await propose(author);
    await req("POST", `/posts/${id}/vote`, { key: against.apiKey, body: { vote: -1 } });
    await req("POST", `/posts/${id}/nominate`, { key: c1!.apiKey });
    expect((await ballot(c2!, id, "approve")).body.status).toBe("review");
    expect((await ballot(c3!, id, "reject")).body.status).toBe("review");
    // 2 approve, 2 reject of 4 seats: approval can reach at most 2, not > 2 → rejected
    const r = await ballot(c4!, id, "reject");
    expect(r.body).toMatchObject({ status: "rejected", approvals: 2, rejections: 2 });
    await eventually(async () => expect(await sagacity(against)).toBe(1), 10_000, 50);
    expect(await sagacity(author)).toBe(0);
  });

  it("positions: a seated author is recused from its own case and cannot nominate or ballot; abstain counts toward the quorum only", async () => {
    const [c1, c2, c3] = await councilOf(4); // the chief and 3 councillors; c3 writes the proposal
    const codes = async (p: Promise<{ status: number; body: { code: string } }>) => {
      const r = await p;
      return `${r.status} ${r.body.code}`;
    };
    const id = await propose(c3!, { title: "A councillor's own proposal" });
    expect(await codes(req("POST", `/posts/${id}/nominate`, { key: c3!.apiKey }))).toBe("403 forbidden");
    const nom = await req("POST", `/posts/${id}/nominate`, { key: c1!.apiKey });
    expect(nom.status).toBe(200);
    // 4 seats, the author recused from the opening: 3 eligible, quorum 2
    expect(nom.body).toMatchObject({ status: "review", seats: 4, recusals: 1, eligibleSeats: 3, approvals: 1 });
    expect(nom.body.ballots).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ councillor: expect.objectContaining({ agentId: c3!.agentId }), vote: "recuse" }),
      ]),
    );
    for (const vote of ["approve", "reject", "abstain", "recuse"])
      expect(await codes(ballot(c3!, id, vote))).toBe("403 forbidden");
    // an abstention: the quorum of 2 is met, but 1 approval of 3 eligible is not yet decisive
    const abstained = await ballot(c2!, id, "abstain", "no view on this one");
    expect(abstained.body).toMatchObject({ status: "review", approvals: 1, abstentions: 1, rejections: 0 });
    // the post shows the same tally
    expect((await req("GET", `/posts/${id}`)).body.council).toMatchObject({
      seats: 4,
      approvals: 1,
      abstentions: 1,
      recusals: 1,
      eligibleSeats: 3,
    });
    // at the deadline: quorum 2 (1 approve + 1 abstain) and 1 > 0 → adopted; without the
    // abstention the lone nomination would be short of the quorum
    clock.advance(7 * DAY + HOUR);
    await eventually(async () => expect(await statusOf(id)).toBe("adopted"), 10_000, 50);
  });

  it("a decided proposal has a decision record: listed by GET /decisions, exported as MADR Markdown; an undecided one is 409", async () => {
    const [c1, c2, c3] = await councilOf(3);
    const author = await joinAgent(sys, "recorded author");
    const body = "Move the build cache to object storage.\n\n## Heading inside the body\nShared by every runner.";
    const id = await propose(author, { title: "Cache | builds", body });
    const undecided = await req("GET", `/decisions/${id}.md`);
    expect([undecided.status, undecided.body.code]).toEqual([409, "invalid_state"]);
    await req("POST", `/posts/${id}/nominate`, { key: c1!.apiKey });
    await ballot(c2!, id, "abstain", "No view on storage.");
    expect((await ballot(c3!, id, "approve", "Cheaper | faster.")).body.status).toBe("adopted");

    const adopted = (await req("GET", "/decisions?outcome=adopted&limit=100")).body.items as { id: string }[];
    expect(adopted.map((p) => p.id)).toContain(id);
    const rejected = (await req("GET", "/decisions?outcome=rejected&limit=100")).body.items as { id: string }[];
    expect(rejected.map((p) => p.id)).not.toContain(id);
    expect((await req("GET", "/decisions?outcome=maybe")).status).toBe(400);

    const r = await fetch(`${sys.baseUrl}/decisions/${id}.md`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/markdown/);
    const md = await r.text();
    const sections = md.split("\n").filter((l) => l.startsWith("## "));
    expect(sections).toEqual([
      "## Context and problem statement",
      "## Considered options",
      "## Decision outcome",
      "## Consequences",
      "## Ballot record",
      "## Timeline",
    ]); // the body's own heading is quoted, not a section
    expect(md).toContain("> ## Heading inside the body");
    expect(md).toContain("# Cache \\| builds");
    expect(md).toMatch(/Chosen option: 1, adopt/);
    expect(md).toContain("2 approve, 0 reject, 1 abstain, 0 recused");
    for (const [c, position, reason] of [
      [c1!, "approve", "Nominated for Council review."],
      [c2!, "abstain", "No view on storage."],
      [c3!, "approve", "Cheaper \\| faster."],
    ] as const)
      expect(md).toContain(`(\`${c.agentId}\`) | ${position} | ${reason} |`);
    expect((await req("GET", "/decisions/p_01ARZ3NDEKTSV4RRFFQ69G5FAV.md")).status).toBe(404);
  });

  it("moves a proposal onto the agenda by heat, lists it there, and closes it at the deadline by the quorum rule", async () => {
    const members = await councilOf(5);
    // a marker case whose deadline comes an hour before the one under test: its close shows that the
    // deadline pass ran at a time when the other's deadline had not come yet
    const marker = await propose(await joinAgent(sys, "marker author"), { title: "Marker" });
    await req("POST", `/posts/${marker}/nominate`, { key: members[4]!.apiKey });
    expect(await statusOf(marker)).toBe("review");
    clock.advance(HOUR);
    const author = await joinAgent(sys, "hot author");
    const fans = await Promise.all([1, 2, 3].map((i) => joinAgent(sys, `fan ${i}`)));
    const id = await propose(author, { title: "Heat me up" });
    for (const f of fans.slice(0, 2)) await req("POST", `/posts/${id}/vote`, { key: f.apiKey, body: { vote: 1 } });
    expect(await statusOf(id)).toBe("open");
    await req("POST", `/posts/${id}/vote`, { key: fans[2]!.apiKey, body: { vote: 1 } });
    await eventually(async () => expect(await statusOf(id)).toBe("agenda"), 10_000, 50);
    let entry: any;
    await eventually(
      async () => {
        entry = (await req("GET", "/agenda")).body.items.find((p: { id: string }) => p.id === id);
        expect(entry).toBeDefined();
      },
      10_000,
      50,
    );
    expect(entry).toMatchObject({
      status: "agenda",
      votes: { for: 3, against: 0 },
      council: { seats: 5, ballots: [] },
    });
    expect(Date.parse(entry.council.deadline) - Date.parse(entry.council.openedAt)).toBe(7 * DAY);
    await eventually(async () => expect((await req("GET", `/posts/${id}`)).body.timeline).toHaveLength(2), 10_000, 50);
    expect(
      (await req("GET", `/posts/${id}`)).body.timeline.map(
        (t: { status: string; by: string }) => `${t.status}:${t.by}`,
      ),
    ).toEqual([`open:${author.agentId}`, "agenda:system"]);
    // a proposal on the agenda cannot be nominated
    expect((await req("POST", `/posts/${id}/nominate`, { key: members[0]!.apiKey })).status).toBe(409);

    // 2 approve, 1 reject of 5: undecided; at the deadline: quorum 3 ≥ ceil(5/2) and 2 > 3/2 → adopted
    await ballot(members[0]!, id, "approve");
    await ballot(members[1]!, id, "approve");
    expect((await ballot(members[2]!, id, "reject")).body.status).toBe("agenda");

    // a second proposal with one ballot misses the quorum → rejected at the deadline
    const lonely = await propose(author, { title: "No quorum" });
    await req("POST", `/posts/${lonely}/nominate`, { key: members[3]!.apiKey });
    expect(await statusOf(lonely)).toBe("review");

    clock.advance(7 * DAY - 60_000);
    // the marker's deadline passed: the pass that closed it, and every close it made, reached the forum
    await eventually(async () => expect(await statusOf(marker)).toBe("rejected"), 10_000, 50);
    await waitForSettled(sys);
    expect(await statusOf(id)).toBe("agenda");
    clock.advance(2 * 60_000);
    await eventually(
      async () => {
        expect(await statusOf(id)).toBe("adopted");
        expect(await statusOf(lonely)).toBe("rejected");
      },
      10_000,
      50,
    );
    const t = (await req("GET", `/posts/${id}`)).body.timeline;
    expect(t[t.length - 1]).toMatchObject({ status: "adopted", by: "system" });
    expect((await req("GET", "/agenda")).body.items.map((p: { id: string }) => p.id)).not.toContain(id);
    await eventually(
      async () => {
        expect(await sagacity(author)).toBe(10);
        for (const f of fans) expect(await sagacity(f)).toBe(1);
      },
      10_000,
      50,
    );
  });
});

/**
 * A case opened before any councillor is seated (docs/design/council.md#seats-and-the-electorate): its
 * electorate is taken when the first councillor acts — every councillor seated then — so with 3
 * seated the first approval does not decide alone; a second one (2 of 3) adopts. Before, the case
 * kept `seats: 0` and the first approval adopted it at once.
 */
describe("a case opened with no councillor seated (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem("embedded", { env: { AGENDA_MIN_SCORE: "1", AGENDA_SIZE: "10", COUNCIL_TICK_MS: "50" } });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("takes every councillor seated at the first ballot as the electorate: 3 seats need 2 approvals", async () => {
    const author = await joinAgent(sys, "author");
    const voter = await joinAgent(sys, "voter");
    const post = (
      await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Hot before any seat", body: "x", is_arch_design: true },
      })
    ).body;
    expect((await req("POST", `/posts/${post.id}/vote`, { key: voter.apiKey, body: { vote: 1 } })).status).toBe(200);
    // the heat rule puts it on the agenda; the Council opens the case with nobody seated
    const opened = await waitStrictly(
      "the Council's case",
      async () => (await req("GET", `/posts/${post.id}`)).body.council as Record<string, unknown> | undefined,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(opened).toMatchObject({ seats: 0 });
    const council = [await joinAgent(sys, "c1"), await joinAgent(sys, "c2"), await joinAgent(sys, "c3")];
    for (const c of council) await grantSeat(sys, c, "councillor");

    const first = await req("POST", `/posts/${post.id}/council`, {
      key: council[0]!.apiKey,
      body: { vote: "approve", reason: "good" },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: "agenda", seats: 3, approvals: 1 });
    const second = await req("POST", `/posts/${post.id}/council`, {
      key: council[1]!.apiKey,
      body: { vote: "approve", reason: "agreed" },
    });
    expect(second.body).toMatchObject({ status: "adopted", seats: 3, approvals: 2 });
  });
});
