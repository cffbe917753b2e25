import { eventually, httpClient, OffsetClock } from "@aps/testkit";
import { expectProblem, grantSeat, joinAgent, propose } from "../support/fixtures.js";
import { availableModes, routeModes, startSystem, type Mode, type System } from "../support/system.js";
import { waitForSettled } from "../support/settle.js";

/**
 * The Council's depth through HTTP (docs/reference/moderation-and-council-depth.md, docs/design/council.md#duplicates):
 * duplicates, blocking concerns (after the Rust RFC process) and implementation progress (after
 * Decidim's accountability) — who may, in which status, the limits, and every refusal answered as
 * problem+json with nothing changed. The deadline close with open concerns moves an injected
 * clock, so it runs in the in-jest modes only; everything else runs in every mode.
 */
const modes = await routeModes("council-depth.test.ts"); // docs/design/tests.md#test-tiers "Run modes"; the image: api and notifications (docs/design/tests.md#container-systems)
// The deadline block needs the test clock, so the in-jest modes: the in-process bus and JetStream.
const clockModes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const DAY = 86_400_000;

/** A running system with a Council of three: the chief and two councillors. */
async function councilSystem(mode: Mode, clock?: OffsetClock) {
  const sys: System = await startSystem(mode, {
    ...(clock ? { clock } : {}),
    env: { COUNCIL_DEADLINE: "7d", COUNCIL_TICK_MS: "50", JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" },
  });
  const req = httpClient(sys.baseUrl);
  const chief = await joinAgent(sys, "chief");
  await grantSeat(sys, chief, "chief");
  const c1 = await joinAgent(sys, "councillor one");
  const c2 = await joinAgent(sys, "councillor two");
  await grantSeat(sys, c1, "councillor");
  await grantSeat(sys, c2, "councillor");
  const author = await joinAgent(sys, "author");
  const outsider = await joinAgent(sys, "outsider");
  const post = async (id: string) => (await req("GET", `/posts/${id}`)).body;
  return {
    sys,
    req,
    chief,
    c1,
    c2,
    author,
    outsider,
    /** A proposal by `author` ("Details."), an architecture proposal unless `arch` is false. */
    propose: (title: string, arch = true) => propose(author, { title, arch }),
    post,
  };
}

const MISSING = "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W";

describe.each(modes)("Council depth (%s)", (mode) => {
  let t: Awaited<ReturnType<typeof councilSystem>>;
  beforeAll(async () => {
    t = await councilSystem(mode);
  });
  afterAll(async () => {
    await t?.sys.stop();
  });

  it("a concern holds back a decisive approval until its raiser resolves it; refusals change nothing", async () => {
    const { req, chief, c1, c2, author, outsider, propose, post } = t;
    const id = await propose("Concerned");
    // not before the Council yet
    expectProblem(
      await req("POST", `/posts/${id}/concerns`, { key: c2.apiKey, body: { reason: "Too early" } }),
      409,
      "invalid_state",
    );
    expect((await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey })).status).toBe(200);

    // who may, and bad input
    expectProblem(await req("POST", `/posts/${id}/concerns`, { body: { reason: "x" } }), 401, "unauthenticated");
    expectProblem(
      await req("POST", `/posts/${id}/concerns`, { key: outsider.apiKey, body: { reason: "x" } }),
      403,
      "forbidden",
    );
    expectProblem(
      await req("POST", `/posts/${id}/concerns`, { key: author.apiKey, body: { reason: "x" } }),
      403,
      "forbidden",
    );
    for (const body of [
      {},
      { reason: "" },
      { reason: "   " },
      { reason: 5 },
      { reason: "ok", extra: 1 },
      { reason: "x".repeat(10_001) },
    ])
      expectProblem(await req("POST", `/posts/${id}/concerns`, { key: c2.apiKey, body }), 400, "invalid_request");
    expectProblem(
      await req("POST", `/posts/${MISSING}/concerns`, { key: c2.apiKey, body: { reason: "x" } }),
      404,
      "not_found",
    );
    expect((await post(id)).concerns).toEqual([]);

    const raised = await req("POST", `/posts/${id}/concerns`, {
      key: c2.apiKey,
      body: { reason: "The migration path is unspecified." },
    });
    expect(raised.status).toBe(201);
    expect(raised.body).toMatchObject({ status: "review", openConcerns: 1 });
    const cid = raised.body.concerns[0].id as string;
    expect(raised.body.concerns[0]).toMatchObject({
      raisedBy: c2.agentId,
      reason: "The migration path is unspecified.",
      resolved: null,
    });

    // 2 approvals of 3 seats would adopt at once; the open concern makes it wait
    const ballot = await req("POST", `/posts/${id}/council`, {
      key: chief.apiKey,
      body: { vote: "approve", reason: "Yes" },
    });
    expect(ballot.status).toBe(200);
    expect(ballot.body).toMatchObject({ status: "review", approvals: 2, closedAt: null });
    expect((await post(id)).status).toBe("review");

    // only the raiser or the chief may resolve; bad notes and unknown concerns are refused
    expectProblem(
      await req("POST", `/posts/${id}/concerns/${cid}/resolve`, { key: c1.apiKey, body: { note: "fine" } }),
      403,
      "forbidden",
    );
    expectProblem(
      await req("POST", `/posts/${id}/concerns/${cid}/resolve`, { key: outsider.apiKey, body: { note: "fine" } }),
      403,
      "forbidden",
    );
    for (const body of [{}, { note: "" }, { note: "ok", x: 1 }])
      expectProblem(
        await req("POST", `/posts/${id}/concerns/${cid}/resolve`, { key: c2.apiKey, body }),
        400,
        "invalid_request",
      );
    expectProblem(
      await req("POST", `/posts/${id}/concerns/cn_01JD3Z6Q9V8XKJ4M2N5P7R9T0W/resolve`, {
        key: c2.apiKey,
        body: { note: "x" },
      }),
      404,
      "not_found",
    );
    expectProblem(
      await req("POST", `/posts/${id}/concerns/nope/resolve`, { key: c2.apiKey, body: { note: "x" } }),
      404,
      "not_found",
    );
    expect((await post(id)).openConcerns).toBe(1);

    const resolved = await req("POST", `/posts/${id}/concerns/${cid}/resolve`, {
      key: c2.apiKey,
      body: { note: "Section 4 now covers it." },
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: "adopted", openConcerns: 0 });
    expect(resolved.body.concerns[0].resolved).toMatchObject({ by: c2.agentId, note: "Section 4 now covers it." });
    expectProblem(
      await req("POST", `/posts/${id}/concerns/${cid}/resolve`, { key: c2.apiKey, body: { note: "again" } }),
      409,
      "invalid_state",
    );

    const d = await post(id);
    expect(d.status).toBe("adopted");
    expect(d.timeline.map((e: { event: string; status: string }) => `${e.event}:${e.status}`)).toEqual([
      "created:open",
      "status:review",
      "concern_raised:review",
      "concern_resolved:review",
      "status:adopted",
    ]);
    expect(d.timeline[2]).toMatchObject({ by: c2.agentId, concernId: cid, note: "The migration path is unspecified." });
    // a closed case takes no new concern
    expectProblem(
      await req("POST", `/posts/${id}/concerns`, { key: c2.apiKey, body: { reason: "late" } }),
      409,
      "invalid_state",
    );
  });

  it("the chief may resolve another councillor's concern; a rejection is never blocked", async () => {
    const { req, chief, c1, c2, propose } = t;
    const id = await propose("Chief resolves");
    await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey });
    const cid = (await req("POST", `/posts/${id}/concerns`, { key: c2.apiKey, body: { reason: "Why?" } })).body
      .concerns[0].id;
    const r = await req("POST", `/posts/${id}/concerns/${cid}/resolve`, {
      key: chief.apiKey,
      body: { note: "Answered" },
    });
    expect(r.status).toBe(200);
    expect(r.body.concerns[0].resolved.by).toBe(chief.agentId);
    expect(r.body.status).toBe("review"); // 1 approval of 3: not decisive

    const rej = await propose("Rejected despite a concern");
    await req("POST", `/posts/${rej}/nominate`, { key: c1.apiKey });
    await req("POST", `/posts/${rej}/concerns`, { key: c1.apiKey, body: { reason: "On reflection" } });
    await req("POST", `/posts/${rej}/council`, { key: c1.apiKey, body: { vote: "reject", reason: "No" } });
    const closed = await req("POST", `/posts/${rej}/council`, {
      key: c2.apiKey,
      body: { vote: "reject", reason: "No" },
    });
    expect(closed.body.status).toBe("rejected");
  });

  it("progress: the ext_ executor or the chief, while implementing, never decreasing; complete needs none", async () => {
    const { sys, req, chief, c1, c2, outsider, propose, post } = t;
    const executor = await joinAgent(sys, "executor");
    const id = await propose("Build it");
    await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey });
    expectProblem(
      await req("POST", `/posts/${id}/progress`, { key: chief.apiKey, body: { note: "early", percent: 5 } }),
      409,
      "invalid_state",
    );
    expect(
      (await req("POST", `/posts/${id}/council`, { key: c2.apiKey, body: { vote: "approve", reason: "ok" } })).body
        .status,
    ).toBe("adopted");
    expectProblem(
      await req("POST", `/posts/${id}/progress`, { key: chief.apiKey, body: { note: "early", percent: 5 } }),
      409,
      "invalid_state",
    );
    expect(
      (
        await req("POST", `/posts/${id}/handoff`, {
          key: chief.apiKey,
          body: { implementation: "task", executor: executor.agentId },
        })
      ).status,
    ).toBe(200);

    expectProblem(
      await req("POST", `/posts/${id}/progress`, { key: outsider.apiKey, body: { note: "me", percent: 5 } }),
      403,
      "forbidden",
    );
    expectProblem(
      await req("POST", `/posts/${id}/progress`, { key: c1.apiKey, body: { note: "me", percent: 5 } }),
      403,
      "forbidden",
    );
    for (const body of [
      { note: "x", percent: 101 },
      { note: "x", percent: -1 },
      { note: "x", percent: 1.5 },
      { note: "x", percent: "50" },
      { note: "", percent: 5 },
      { percent: 5 },
      { note: "x" },
      { note: "x", percent: 5, extra: true },
    ])
      expectProblem(await req("POST", `/posts/${id}/progress`, { key: executor.apiKey, body }), 400, "invalid_request");
    expect((await post(id)).progress).toBeNull();

    const first = await req("POST", `/posts/${id}/progress`, {
      key: executor.apiKey,
      body: { note: "Schema drafted", percent: 10 },
    });
    expect(first.status).toBe(201);
    expect(first.body.progress).toMatchObject({ percent: 10, note: "Schema drafted", by: executor.agentId });
    expect(
      (await req("POST", `/posts/${id}/progress`, { key: chief.apiKey, body: { note: "Half", percent: 40 } })).status,
    ).toBe(201);
    expect(
      (await req("POST", `/posts/${id}/progress`, { key: executor.apiKey, body: { note: "Same", percent: 40 } }))
        .status,
    ).toBe(201);
    expectProblem(
      await req("POST", `/posts/${id}/progress`, { key: executor.apiKey, body: { note: "Back", percent: 30 } }),
      409,
      "invalid_state",
    );

    const d = await post(id);
    expect(d.progress).toMatchObject({ percent: 40, note: "Same" });
    expect(d.progressUpdates.map((p: { percent: number }) => p.percent)).toEqual([10, 40, 40]);
    expect(
      d.timeline.filter((e: { event: string }) => e.event === "progress").map((e: { percent: number }) => e.percent),
    ).toEqual([10, 40, 40]);

    expect((await req("POST", `/posts/${id}/complete`, { key: chief.apiKey })).body.status).toBe("completed");
    expectProblem(
      await req("POST", `/posts/${id}/progress`, { key: executor.apiKey, body: { note: "After", percent: 100 } }),
      409,
      "invalid_state",
    );

    // a hand-off to a team (no ext_ agent): only the chief reports
    const team = await propose("Team work");
    await req("POST", `/posts/${team}/nominate`, { key: c1.apiKey });
    await req("POST", `/posts/${team}/council`, { key: c2.apiKey, body: { vote: "approve", reason: "ok" } });
    await req("POST", `/posts/${team}/handoff`, {
      key: chief.apiKey,
      body: { implementation: "task", executor: "platform-team" },
    });
    expectProblem(
      await req("POST", `/posts/${team}/progress`, { key: executor.apiKey, body: { note: "x", percent: 1 } }),
      403,
      "forbidden",
    );
    expect(
      (await req("POST", `/posts/${team}/progress`, { key: chief.apiKey, body: { note: "x", percent: 1 } })).status,
    ).toBe(201);
  });

  it("duplicates: a councillor closes a post as a duplicate of another; refusals change nothing", async () => {
    const { req, chief, c1, c2, author, outsider, propose, post } = t;
    const original = await propose("The original");
    const dup = await propose("The same again");
    const body = { of: original };
    expectProblem(await req("POST", `/posts/${dup}/duplicate`, { key: outsider.apiKey, body }), 403, "forbidden");
    expectProblem(
      await req("POST", `/posts/${dup}/duplicate`, { key: c1.apiKey, body: { of: dup } }),
      400,
      "invalid_request",
    );
    for (const bad of [{}, { of: "nope" }, { of: original, x: 1 }, { of: 7 }])
      expectProblem(
        await req("POST", `/posts/${dup}/duplicate`, { key: c1.apiKey, body: bad }),
        400,
        "invalid_request",
      );
    expectProblem(
      await req("POST", `/posts/${dup}/duplicate`, { key: c1.apiKey, body: { of: MISSING } }),
      404,
      "not_found",
    );
    expectProblem(await req("POST", `/posts/${MISSING}/duplicate`, { key: c1.apiKey, body }), 404, "not_found");
    expect((await post(dup)).status).toBe("open");

    const r = await req("POST", `/posts/${dup}/duplicate`, { key: c1.apiKey, body });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "duplicate", duplicateOf: original });
    const d = await post(dup);
    expect(d).toMatchObject({ status: "duplicate", duplicateOf: original });
    expect(d.timeline.at(-1)).toMatchObject({
      event: "status",
      status: "duplicate",
      by: c1.agentId,
      duplicateOf: original,
    });
    await eventually(async () => expect((await post(original)).duplicateCount).toBe(1), 10_000, 50);
    // already a duplicate; and nothing may point at a duplicate
    expectProblem(await req("POST", `/posts/${dup}/duplicate`, { key: c2.apiKey, body }), 409, "invalid_state");
    const third = await propose("Third copy");
    expectProblem(
      await req("POST", `/posts/${third}/duplicate`, { key: c2.apiKey, body: { of: dup } }),
      409,
      "invalid_state",
    );
    // the author may still comment on the original
    expect(
      (await req("POST", `/posts/${original}/comments`, { key: author.apiKey, body: { body: "Mine is the same" } }))
        .status,
    ).toBe(201);

    // a post under review: its open case closes, ballots are then refused
    const reviewed = await propose("Under review");
    await req("POST", `/posts/${reviewed}/nominate`, { key: c1.apiKey });
    const closed = await req("POST", `/posts/${reviewed}/duplicate`, { key: c2.apiKey, body });
    expect(closed.body).toMatchObject({ status: "duplicate" });
    expect(closed.body.closedAt).not.toBeNull();
    expectProblem(
      await req("POST", `/posts/${reviewed}/council`, { key: chief.apiKey, body: { vote: "approve", reason: "late" } }),
      409,
      "invalid_state",
    );
    await eventually(async () => expect((await post(original)).duplicateCount).toBe(2), 10_000, 50);
    // the original lists its duplicates, oldest first, and its page links each by its title
    expect((await post(original)).duplicates).toEqual([
      { id: dup, title: (await post(dup)).title },
      { id: reviewed, title: "Under review" },
    ]);
    const page = await (await fetch(`${new URL(t.sys.baseUrl).origin}/posts/${original}`)).text();
    expect(page).toContain(`<a href="/posts/${reviewed}">Under review</a>`);
    await eventually(
      async () => {
        const list = (await req("GET", "/posts?sort=new&limit=100")).body.items as { id: string; status: string }[];
        expect(list.find((p) => p.id === reviewed)?.status).toBe("duplicate");
      },
      10_000,
      50,
    );

    // a free discussion may be a duplicate too
    const free = await propose("A chat", false);
    expect((await req("POST", `/posts/${free}/duplicate`, { key: c2.apiKey, body })).body.status).toBe("duplicate");
    await eventually(async () => expect((await post(free)).status).toBe("duplicate"), 10_000, 50);

    // never a decided post
    const adopted = await propose("Adopted already");
    await req("POST", `/posts/${adopted}/nominate`, { key: c1.apiKey });
    await req("POST", `/posts/${adopted}/council`, { key: c2.apiKey, body: { vote: "approve", reason: "ok" } });
    expectProblem(await req("POST", `/posts/${adopted}/duplicate`, { key: c2.apiKey, body }), 409, "invalid_state");
    await req("POST", `/posts/${adopted}/handoff`, { key: chief.apiKey, body: { implementation: "self" } });
    expectProblem(await req("POST", `/posts/${adopted}/duplicate`, { key: c2.apiKey, body }), 409, "invalid_state");
    await req("POST", `/posts/${adopted}/complete`, { key: chief.apiKey });
    expectProblem(await req("POST", `/posts/${adopted}/duplicate`, { key: c2.apiKey, body }), 409, "invalid_state");
    expect((await post(adopted)).status).toBe("completed");
  });
});

describe.each(clockModes)("Council depth at the deadline (%s)", (mode) => {
  const clock = new OffsetClock();
  let t: Awaited<ReturnType<typeof councilSystem>>;
  beforeAll(async () => {
    t = await councilSystem(mode, clock);
  });
  afterAll(async () => {
    await t?.sys.stop();
  });

  it("closes a case with an open concern as rejected, the open concerns recorded; no Sagacity for the author", async () => {
    const { req, chief, c1, c2, author, propose, post } = t;
    const id = await propose("Blocked to the end");
    await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey });
    const cid = (await req("POST", `/posts/${id}/concerns`, { key: c2.apiKey, body: { reason: "Unsafe" } })).body
      .concerns[0].id as string;
    expect(
      (await req("POST", `/posts/${id}/council`, { key: chief.apiKey, body: { vote: "approve", reason: "ok" } })).body
        .status,
    ).toBe("review");
    clock.advance(7 * DAY + 60_000);
    // The status (the forum's status projection) and the timeline (its case projection) come from
    // two consumers of the council's events: wait until both show the close.
    let d: any;
    await eventually(
      async () => {
        const p = (d = await post(id));
        expect(p.status).toBe("rejected");
        expect(p.timeline.at(-1)).toMatchObject({
          event: "status",
          status: "rejected",
          by: "system",
          openConcerns: [cid],
        });
      },
      10_000,
      50,
    );
    expect(d.concerns[0]).toMatchObject({ id: cid, resolved: null });
    expectProblem(
      await req("POST", `/posts/${id}/concerns/${cid}/resolve`, { key: c2.apiKey, body: { note: "late" } }),
      409,
      "invalid_state",
    );
    // nothing more can come once every event is delivered and acknowledged (a redelivery, e.g.
    // after a NAK backoff or ack_wait, lands after any short sleep): then no award (docs/design/tests.md#the-settled-bus)
    await waitForSettled(t.sys);
    expect((await req("GET", "/me", { key: author.apiKey })).body.sagacity).toBe(0);
  });
});
