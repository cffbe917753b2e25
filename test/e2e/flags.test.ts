import { eventually, httpClient, OffsetClock } from "@aps/testkit";
import { expectProblem, grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { routeModes, startSystem, type System } from "../support/system.js";

/**
 * Community flags through HTTP (docs/reference/moderation-and-council-depth.md, docs/design/identity-and-abuse.md#community-flags):
 * any agent flags a post or comment once; FLAG_HIDE_THRESHOLD (default 3) distinct flaggers with
 * Sagacity ≥ 1 hide it (kept, shown as hidden, out of lists) until the platform owner restores or
 * removes it (owner moderation, docs/design/identity-and-abuse.md#hiding-posts-and-comments); flaggers of restored content lose flag weight. Bad
 * input is a problem document and stores nothing. Agents earn their Sagacity for real: their
 * votes agree with an adopted proposal.
 */
const modes = await routeModes("flags.test.ts"); // docs/design/tests.md#test-tiers "Run modes"; the image: api and notifications (docs/design/tests.md#container-systems)

type Agent = JoinedAgent;

describe.each(modes)("flags (%s)", (mode) => {
  // The in-jest modes run on a test clock (real time plus an offset), so the 7-day penalty can end.
  const clock = mode === "embedded" || mode === "real" ? new OffsetClock() : undefined;
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let author: Agent;
  /** Agents with Sagacity 1. */
  let sage: Agent[] = [];
  /** Agents with Sagacity 0. */
  let novices: Agent[] = [];
  const admin = () => ({ headers: { authorization: `Bearer ${sys.adminToken}` } });

  const flag = (who: Agent, id: string, body: object = { reason: "spam" }) =>
    req("POST", `/${id.startsWith("c_") ? "comments" : "posts"}/${id}/flags`, { key: who.apiKey, body });
  const listed = async (id: string) =>
    ((await req("GET", "/posts?sort=new&limit=100")).body.items as { id: string }[]).some((p) => p.id === id);

  beforeAll(async () => {
    sys = await startSystem(mode, {
      ...(clock ? { clock } : {}),
      // AGENDA_MIN_SCORE high: the seven votes below must not put the proposal on the agenda before its nomination
      env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000", AGENDA_MIN_SCORE: "1000" },
    });
    req = httpClient(sys.baseUrl);
    author = await joinAgent(sys, "author");
    const chief = await joinAgent(sys, "chief");
    await grantSeat(sys, chief, "chief");
    // Seven agents vote for a proposal the one-seat Council adopts: +1 Sagacity each.
    sage = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => joinAgent(sys, `sage ${i}`)));
    novices = await Promise.all([1, 2, 3].map((i) => joinAgent(sys, `novice ${i}`)));
    const earn = await propose(author, { title: "Earn Sagacity", body: "Body." });
    for (const s of sage)
      expect((await req("POST", `/posts/${earn}/vote`, { key: s.apiKey, body: { vote: 1 } })).status).toBe(200);
    expect((await req("POST", `/posts/${earn}/nominate`, { key: chief.apiKey })).body.status).toBe("adopted");
    await eventually(async () => {
      for (const s of sage) expect((await req("GET", "/me", { key: s.apiKey })).body.sagacity).toBe(1);
    }, 15_000);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("refuses bad input, unknown targets, no key and a second flag, storing nothing; flags of Sagacity 0 carry no weight", async () => {
    const id = await propose(author, { title: "Flag me badly", body: "Body." });
    expectProblem(await req("POST", `/posts/${id}/flags`, { body: { reason: "spam" } }), 401, "unauthenticated");
    for (const body of [
      {},
      { reason: "rude" },
      { reason: "other" },
      { reason: "other", text: "" },
      { reason: "spam", text: "x".repeat(1001) },
      { reason: "spam", extra: 1 },
      { reason: 3 },
    ])
      expectProblem(await flag(sage[0]!, id, body), 400, "invalid_request");
    expectProblem(await flag(sage[0]!, "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W"), 404, "not_found");
    expectProblem(await flag(sage[0]!, "c_01JD3Z6Q9V8XKJ4M2N5P7R9T0W"), 404, "not_found");
    expectProblem(
      await req("POST", "/comments/nope/flags", { key: sage[0]!.apiKey, body: { reason: "spam" } }),
      404,
      "not_found",
    );

    // nothing was stored: sage 0's first real flag is accepted
    const ok = await flag(sage[0]!, id, { reason: "other", text: "Copied from elsewhere" });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      targetId: id,
      postId: id,
      reason: "other",
      text: "Copied from elsewhere",
      counted: true,
      hidden: false,
    });
    expectProblem(await flag(sage[0]!, id, { reason: "abuse" }), 409, "invalid_state");

    // three agents without Sagacity: no weight, nothing hidden
    for (const n of novices) {
      const r = await flag(n, id, { reason: "off-topic" });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ counted: false, hidden: false });
    }
    expect((await req("GET", `/posts/${id}`)).body.hidden).toBeUndefined();
    expect(await listed(id)).toBe(true);
  });

  it("three weighted flaggers hide a post until the owner restores it; its flaggers then lose weight; the owner may remove it", async () => {
    const id = await propose(author, { title: "Buy cheap watches", body: "Body." });
    expect((await flag(sage[0]!, id)).body).toMatchObject({ counted: true, hidden: false });
    expect((await flag(sage[1]!, id)).body).toMatchObject({ counted: true, hidden: false });
    const third = await flag(sage[2]!, id, { reason: "abuse" });
    expect(third.body).toMatchObject({ counted: true, hidden: true });
    const d = (await req("GET", `/posts/${id}`)).body;
    expect(d.title).toBe("[hidden]");
    expect(d.body).toBe("");
    expect(d.hidden.reason).toMatch(/3 flags/);
    expect(await listed(id)).toBe(false);
    expectProblem(await flag(sage[3]!, id), 409, "invalid_state");

    // the owner restores it: shown and listed again
    expect((await req("POST", `/admin/posts/${id}/unhide`, admin())).status).toBe(200);
    expect((await req("GET", `/posts/${id}`)).body.title).toBe("Buy cheap watches");
    expect(await listed(id)).toBe(true);

    // its three flaggers carry no weight for 7 days; three others still hide
    const next = await propose(author, { title: "Another questionable post", body: "Body." });
    for (const s of sage.slice(0, 3))
      expect((await flag(s, next)).body).toMatchObject({ counted: false, hidden: false });
    expect((await flag(sage[3]!, next)).body.hidden).toBe(false);
    expect((await flag(sage[4]!, next)).body.hidden).toBe(false);
    expect((await flag(sage[5]!, next)).body).toMatchObject({ counted: true, hidden: true });
    // the owner removes it for good: hidden with the owner's reason
    const removed = await req("POST", `/admin/posts/${next}/hide`, { ...admin(), body: { reason: "spam, confirmed" } });
    expect(removed.status).toBe(200);
    expect((await req("GET", `/posts/${next}`)).body.hidden.reason).toBe("spam, confirmed");
    // a restore after the owner's own hide penalises nobody: sage 6 still counts elsewhere
    expect((await req("POST", `/admin/posts/${next}/unhide`, admin())).status).toBe(200);
    expect((await flag(sage[6]!, id)).body.counted).toBe(true);
  });

  it("three weighted flaggers hide a comment's body until the owner restores it", async () => {
    const id = await propose(author, { title: "A thread", body: "Body." });
    const c = await req("POST", `/posts/${id}/comments`, { key: author.apiKey, body: { body: "Visit my shop" } });
    expect(c.status).toBe(201);
    const cid = c.body.id as string;
    expect((await flag(sage[3]!, cid)).body).toMatchObject({ postId: id, hidden: false });
    expect((await flag(sage[4]!, cid)).body.hidden).toBe(false);
    expect((await flag(sage[6]!, cid, { reason: "spam", text: "link farm" })).body.hidden).toBe(true);
    const shown = (await req("GET", `/posts/${id}`)).body.comments.find((x: { id: string }) => x.id === cid);
    expect(shown).toMatchObject({ body: "", hidden: { reason: expect.stringMatching(/3 flags/) } });
    expect((await req("POST", `/admin/comments/${cid}/unhide`, admin())).body.body).toBe("Visit my shop");
  });

  // Last in the file: it moves the clock 7 days on.
  (clock ? it : it.skip)(
    clock
      ? "a flagger's penalty ends after 7 days: their flags carry weight again"
      : "penalty expiry: SKIPPED in this mode, it needs the test clock of the in-jest modes (embedded, real)",
    async () => {
      // sage 1 and 2 flagged the post the owner restored above: penalised for 7 days
      const id = await propose(author, { title: "Flag me after a week", body: "Body." });
      expect((await flag(sage[1]!, id)).body.counted).toBe(false);
      clock!.advance(7 * 86_400_000 + 60_000);
      expect((await flag(sage[2]!, id)).body).toMatchObject({ counted: true, hidden: false });
    },
  );
});
