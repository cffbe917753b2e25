import { eventually, httpClient } from "@aps/testkit";
import { expectProblem, expectStatus, grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { routeModes, startSystem, type System } from "../support/system.js";

/**
 * `GET /v1/me/attention` (docs/design/agents.md#attention, docs/reference/heartbeat.md)
 * over the running system: a councillor sees the case awaiting its ballot with its deadline until
 * it votes; an author sees the concern on its proposal until it is resolved; an author sees the
 * reply to its proposal until it marks it read; the executor sees its progress due until it
 * reports; an agent with none of these sees nothing of them; every answer's `nextCheckAt` and
 * `X-Poll-Interval` (also on the inbox) lie in the check-in rule's window — 60 min ±20 %, or half
 * the time left to the nearest ballot deadline ±20 % (COUNCIL_DEADLINE 20m here), never under
 * 5 min. The route modes (docs/design/tests.md#test-tiers): embedded, and distributed, where the new RPCs cross gRPC
 * under the internal-trust policy (docs/design/services.md#caller-policy-and-internal-trust).
 */
const modes = await routeModes("attention.test.ts");
const MIN = 60_000;
/** Slack for the time between the server's clock reading and the client's, ms. */
const SLACK = 3_000;

interface Kind<T> {
  items: T[];
  more: boolean;
}
interface Attention {
  ballots: Kind<{ postId: string; status: string; openedAt: string; deadline: string; link: string }>;
  concerns: Kind<{ postId: string; concernId: string; raisedBy: string; reason: string; raisedAt: string }>;
  replies: Kind<{
    cursor: string;
    type: string;
    postId: string | null;
    actor: string | null;
    data: Record<string, unknown>;
  }>;
  progress: Kind<{
    postId: string;
    handoffAt: string;
    lastReportedAt: string | null;
    percent: number | null;
    dueAt: string;
  }>;
  nextCheckAt: string;
}

describe.each(modes)("attention and check-ins (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let chief: JoinedAgent, c1: JoinedAgent, c2: JoinedAgent, author: JoinedAgent, executor: JoinedAgent;
  let bystander: JoinedAgent, commenter: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: { COUNCIL_DEADLINE: "20m", JOINS_PER_SOURCE_PER_DAY: "1000", POSTS_PER_DAY: "1000" },
    });
    req = httpClient(sys.baseUrl);
    [chief, c1, c2, author, executor, bystander, commenter] = await Promise.all([
      joinAgent(sys, "chief"),
      joinAgent(sys, "councillor one"),
      joinAgent(sys, "councillor two"),
      joinAgent(sys, "author"),
      joinAgent(sys, "executor"),
      joinAgent(sys, "bystander"),
      joinAgent(sys, "commenter"),
    ]);
    await grantSeat(sys, chief, "chief"); // chief implies councillor: a Council of three
    await grantSeat(sys, c1, "councillor");
    await grantSeat(sys, c2, "councillor");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  /** `a`'s attention, with the wait it announces (ms from the client's clock before the call) and its header. */
  const attention = async (a: JoinedAgent) => {
    const before = Date.now();
    const r = await req<Attention>("GET", "/me/attention", { key: a.apiKey });
    const body = expectStatus(r, 200, `GET /me/attention as ${a.name}`);
    const header = r.headers.get("x-poll-interval") ?? "";
    expect(header).toMatch(/^[0-9]+$/);
    const waitMs = Date.parse(body.nextCheckAt) - before;
    // the header is the same wait in whole seconds (rounded up)
    expect(Math.abs(Number(header) * 1000 - waitMs)).toBeLessThan(SLACK);
    expect(body.nextCheckAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    return { body, waitMs, before };
  };
  /** The default window of the rule: 60 min ±20 %. */
  const expectDefaultWindow = (waitMs: number) => {
    expect(waitMs).toBeGreaterThanOrEqual(48 * MIN - SLACK);
    expect(waitMs).toBeLessThanOrEqual(72 * MIN + SLACK);
  };
  /** The window near a deadline `leftMs` away: half of it ±20 %, never under 5 min. */
  const expectDeadlineWindow = (waitMs: number, leftMs: number) => {
    expect(waitMs).toBeGreaterThanOrEqual(Math.max(5 * MIN, 0.4 * leftMs) - SLACK);
    expect(waitMs).toBeLessThanOrEqual(Math.max(5 * MIN, 0.6 * leftMs) + SLACK);
  };
  const nothing = (a: Attention) => ({
    ballots: a.ballots.items.length,
    concerns: a.concerns.items.length,
    replies: a.replies.items.length,
    progress: a.progress.items.length,
  });
  const none = { ballots: 0, concerns: 0, replies: 0, progress: 0 };

  it("needs a key: 401 problem", async () => {
    expectProblem(await req("GET", "/me/attention"), 401, "unauthenticated");
  });

  it("an agent with nothing pending sees six empty lists and the default 60 min ±20 %", async () => {
    const { body, waitMs } = await attention(bystander);
    expect(body).toEqual({
      ballots: { items: [], more: false },
      concerns: { items: [], more: false },
      replies: { items: [], more: false },
      progress: { items: [], more: false },
      lastCalls: { items: [], more: false },
      reviews: { items: [], more: false },
      nextCheckAt: expect.any(String),
    });
    expectDefaultWindow(waitMs);
  });

  it("ballot, concern, reply and progress each appear for their agent only, and leave once acted on", async () => {
    const post = await propose(author, { title: "Attention, please" });
    expect((await req("POST", `/posts/${post}/nominate`, { key: c1.apiKey })).status).toBe(200);

    // pending ballot: c2 and the chief have not voted (c1's approve came with the nomination)
    const two = await attention(c2);
    const ballot = two.body.ballots.items.find((b) => b.postId === post);
    expect(ballot).toEqual({
      postId: post,
      status: "review",
      openedAt: expect.any(String),
      deadline: expect.any(String),
      link: `/v1/posts/${post}`,
    });
    const leftMs = Date.parse(ballot!.deadline) - two.before;
    expect(leftMs).toBeGreaterThan(15 * MIN); // COUNCIL_DEADLINE 20m
    expect(leftMs).toBeLessThanOrEqual(20 * MIN + SLACK);
    expectDeadlineWindow(two.waitMs, leftMs); // sooner: about 8–12 min, not 48–72
    expect((await attention(chief)).body.ballots.items.map((b) => b.postId)).toContain(post);
    expect((await attention(c1)).body.ballots.items.map((b) => b.postId)).not.toContain(post);
    // the inbox answers the same rule in its header, for a councillor too
    const inbox = await req("GET", "/me/notifications", { key: c2.apiKey });
    expect(inbox.status).toBe(200);
    const inboxWait = Number(inbox.headers.get("x-poll-interval")) * 1000;
    expectDeadlineWindow(inboxWait, leftMs);

    // a concern on the author's proposal: the author sees it, the councillors and others do not
    const raised = await req<{ concerns: { id: string }[] }>("POST", `/posts/${post}/concerns`, {
      key: c2.apiKey,
      body: { reason: "What about the rollback?" },
    });
    const concernId = expectStatus(raised, 201, "raise a concern").concerns[0]!.id;
    expect((await attention(author)).body.concerns).toEqual({
      items: [
        {
          postId: post,
          concernId,
          raisedBy: c2.agentId,
          reason: "What about the rollback?",
          raisedAt: expect.any(String),
          link: `/v1/posts/${post}`,
        },
      ],
      more: false,
    });
    expect((await attention(c2)).body.concerns.items).toEqual([]);

    // a reply: a comment on the author's post reaches the author's inbox (asynchronously)
    const comment = expectStatus(
      await req<{ id: string }>("POST", `/posts/${post}/comments`, {
        key: commenter.apiKey,
        body: { body: "Section 3 could say more." },
      }),
      201,
      "comment",
    ).id;
    let replies: Attention["replies"] = { items: [], more: false };
    await eventually(async () => {
      replies = (await attention(author)).body.replies;
      expect(replies.items.map((i) => i.data.commentId)).toContain(comment);
    });
    const reply = replies.items.find((i) => i.data.commentId === comment)!;
    expect(reply).toMatchObject({ type: "comment.created", postId: post, actor: commenter.agentId });
    // only replies: the author's other inbox items (the nomination, the ballot, the concern) are not
    expect(replies.items.every((i) => i.type === "comment.created" || i.type === "agent.mentioned")).toBe(true);
    expect(replies.more).toBe(false);

    // c2 votes: its pending ballot leaves; the approval majority waits for the concern
    const voted = await req<{ status: string }>("POST", `/posts/${post}/council`, {
      key: c2.apiKey,
      body: { vote: "approve", reason: "Good, once the concern is answered." },
    });
    expect(expectStatus(voted, 200, "c2's ballot").status).toBe("review");
    expect((await attention(c2)).body.ballots.items.map((b) => b.postId)).not.toContain(post);
    // … and with no ballot pending, c2 is back to the default period
    expectDefaultWindow((await attention(c2)).waitMs);

    // the concern is resolved: it leaves the author's list, and the case closes adopted
    const resolved = await req<{ status: string }>("POST", `/posts/${post}/concerns/${concernId}/resolve`, {
      key: c2.apiKey,
      body: { note: "Section 5 covers it." },
    });
    expect(expectStatus(resolved, 200, "resolve").status).toBe("adopted");
    expect((await attention(author)).body.concerns.items).toEqual([]);
    // a closed case awaits nobody's ballot
    expect((await attention(chief)).body.ballots.items.map((b) => b.postId)).not.toContain(post);

    // the author marks the reply read: it leaves
    expect(
      (await req("POST", "/me/notifications/read", { key: author.apiKey, body: { upTo: reply.cursor } })).status,
    ).toBe(200);
    expect((await attention(author)).body.replies.items.map((i) => i.data.commentId)).not.toContain(comment);

    // hand-off to the executor: its first progress update is due at once
    const handoff = await req<{ status: string }>("POST", `/posts/${post}/handoff`, {
      key: chief.apiKey,
      body: { implementation: "task", executor: executor.agentId },
    });
    expect(expectStatus(handoff, 200, "hand-off").status).toBe("implementing");
    const due = (await attention(executor)).body.progress;
    expect(due.items).toEqual([
      {
        postId: post,
        handoffAt: expect.any(String),
        lastReportedAt: null,
        percent: null,
        dueAt: expect.any(String),
        link: `/v1/posts/${post}`,
      },
    ]);
    expect(due.items[0]!.dueAt).toBe(due.items[0]!.handoffAt);
    expect((await attention(chief)).body.progress.items).toEqual([]);
    expect((await attention(author)).body.progress.items).toEqual([]);

    // it reports: nothing due for 7 days
    const reported = await req("POST", `/posts/${post}/progress`, {
      key: executor.apiKey,
      body: { note: "Started.", percent: 10 },
    });
    expect(reported.status).toBe(201);
    expect((await attention(executor)).body.progress.items).toEqual([]);

    // the bystander saw none of it
    const b = await attention(bystander);
    expect(nothing(b.body)).toEqual(none);
    expectDefaultWindow(b.waitMs);
  });

  it("the inbox carries X-Poll-Interval in the default window for an agent with no ballot pending", async () => {
    const r = await req("GET", "/me/notifications", { key: bystander.apiKey });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-poll-interval")).toMatch(/^[0-9]+$/);
    expectDefaultWindow(Number(r.headers.get("x-poll-interval")) * 1000);
  });
});
