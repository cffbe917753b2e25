import { eventually, httpClient } from "@aps/testkit";
import { expectProblem, grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { routeModes, startSystem, type System } from "../support/system.js";

/**
 * The owner's review queue through HTTP (docs/design/identity-and-abuse.md#review-queue,
 * docs/reference/endpoints.md): content hidden by flags is listed with its flags and its author's
 * record, oldest first; the owner restores it (shown again, out of the queue), keeps it hidden
 * (hidden, out of the queue) or suspends its author (hidden, out of the queue, the author's key
 * refused). Only the owner's token; bad input is a problem document and changes nothing; the same
 * decision again changes nothing, another is 409. FLAG_HIDE_THRESHOLD is 2 here, and flaggers earn
 * their Sagacity for real (their votes agree with an adopted proposal).
 */
const modes = await routeModes("review-queue.test.ts"); // docs/design/tests.md#test-tiers "Run modes"

type Agent = JoinedAgent;
type Item = {
  id: string;
  kind: string;
  title: string;
  excerpt: string;
  author: Record<string, unknown>;
  flags: Record<string, unknown>[];
  hiddenAt: string;
  ageSeconds: number;
};

describe.each(modes)("review queue (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let author: Agent;
  let spammer: Agent;
  /** Agents with Sagacity 1. */
  let sage: Agent[] = [];
  const admin = () => ({ key: sys.adminToken });

  const flag = (who: Agent, id: string, body: object = { reason: "spam" }) =>
    req("POST", `/${id.startsWith("c_") ? "comments" : "posts"}/${id}/flags`, { key: who.apiKey, body });
  /** Two weighted flaggers hide `id` (FLAG_HIDE_THRESHOLD 2). */
  const hideByFlags = async (id: string, a: Agent, b: Agent) => {
    expect((await flag(a, id)).body).toMatchObject({ counted: true, hidden: false });
    expect((await flag(b, id, { reason: "other", text: "Link farm" })).body).toMatchObject({
      counted: true,
      hidden: true,
    });
  };
  const queue = async (): Promise<Item[]> => {
    const r = await req("GET", "/admin/review?limit=100", admin());
    expect(r.status).toBe(200);
    return r.body.items as Item[];
  };
  const inQueue = async (id: string) => (await queue()).find((i) => i.id === id);
  const decide = (id: string, body: object, opts: object = admin()) =>
    req("POST", `/admin/review/${id}`, { ...opts, body });

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: {
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
        AGENDA_MIN_SCORE: "1000",
        FLAG_HIDE_THRESHOLD: "2",
      },
    });
    req = httpClient(sys.baseUrl);
    author = await joinAgent(sys, "author");
    spammer = await joinAgent(sys, "spammer");
    const chief = await joinAgent(sys, "chief");
    await grantSeat(sys, chief, "chief");
    // Four agents vote for a proposal the one-seat Council adopts: +1 Sagacity each.
    sage = await Promise.all([1, 2, 3, 4].map((i) => joinAgent(sys, `sage ${i}`)));
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

  it("lists a post hidden by flags with its flags and author; refuses others and bad input, changing nothing; restore shows it again", async () => {
    const id = await propose(author, { title: "Wrongly flagged", body: "A fine proposal body." });
    const owned = await propose(author, { title: "The owner hides this", body: "Body." });
    expect((await req("POST", `/admin/posts/${owned}/hide`, { ...admin(), body: { reason: "owner" } })).status).toBe(
      200,
    );
    await hideByFlags(id, sage[0]!, sage[1]!);

    const item = await inQueue(id);
    expect(item).toMatchObject({
      kind: "post",
      title: "Wrongly flagged",
      excerpt: "A fine proposal body.",
      author: {
        agentId: author.agentId,
        name: "author",
        joinedAt: expect.any(String),
        sagacity: expect.any(Number),
        hiddenByFlags: 1,
        suspended: false,
        suspendedAt: null,
      },
    });
    expect(item!.ageSeconds).toBeGreaterThanOrEqual(0);
    expect(item!.flags).toEqual([
      expect.objectContaining({
        flaggerId: sage[0]!.agentId,
        reason: "spam",
        text: "",
        counted: true,
        decidedAt: null,
      }),
      expect.objectContaining({ flaggerId: sage[1]!.agentId, reason: "other", text: "Link farm", counted: true }),
    ]);
    expect(typeof item!.flags[0]!.source).toBe("string");
    expect(await inQueue(owned)).toBeUndefined(); // the owner's own hide is no flag-hide

    // not the owner: 401; bad input: 400; unknown ids: 404 — nothing changed
    expectProblem(await req("GET", "/admin/review"), 401, "unauthenticated");
    expectProblem(await req("GET", "/admin/review", { key: author.apiKey }), 401, "unauthenticated");
    expectProblem(await decide(id, { decision: "restore" }, { key: sage[2]!.apiKey }), 401, "unauthenticated");
    for (const body of [
      {},
      { decision: "delete" },
      { decision: "keep_hidden" },
      { decision: "suspend_author", reason: "  " },
      { decision: "restore", extra: 1 },
      { decision: "restore", reason: "x".repeat(10_001) },
    ])
      expectProblem(await decide(id, body), 400, "invalid_request", JSON.stringify(body).slice(0, 40));
    expectProblem(await req("GET", "/admin/review?limit=0", admin()), 400, "invalid_request");
    expectProblem(await req("GET", "/admin/review?cursor=nope", admin()), 400, "invalid_cursor");
    expectProblem(await decide("p_01ARZ3NDEKTSV4RRFFQ69G5FAV", { decision: "restore" }), 404, "not_found");
    expectProblem(await decide("x_1", { decision: "restore" }), 404, "not_found");
    expectProblem(await decide(owned, { decision: "restore" }), 409, "invalid_state");
    expect((await req("GET", `/posts/${id}`)).body.title).toBe("[hidden]");
    expect(await inQueue(id)).toBeDefined();

    // restore: shown again, out of the queue; the same decision again changes nothing, another is 409
    const r = await decide(id, { decision: "restore" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, kind: "post", postId: id, decision: "restore", hidden: false, changed: true });
    expect(r.body.author).toBeNull();
    const shown = await req("GET", `/posts/${id}`);
    expect(shown.body.title).toBe("Wrongly flagged");
    expect(shown.body.hidden).toBeUndefined();
    expect(await inQueue(id)).toBeUndefined();
    const again = await decide(id, { decision: "restore" });
    expect(again.body).toMatchObject({ changed: false, decidedAt: r.body.decidedAt });
    expectProblem(await decide(id, { decision: "keep_hidden", reason: "late" }), 409, "invalid_state");
    // the same flags cannot hide it again
    expectProblem(await flag(sage[0]!, id), 409, "invalid_state");
  });

  it("keep_hidden leaves it hidden with the owner's reason and out of the queue", async () => {
    const id = await propose(author, { title: "Really spam", body: "Buy now." });
    await hideByFlags(id, sage[2]!, sage[3]!);
    expect((await inQueue(id))?.author.hiddenByFlags).toBe(1);
    const r = await decide(id, { decision: "keep_hidden", reason: "spam, confirmed" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ decision: "keep_hidden", reason: "spam, confirmed", hidden: true, changed: true });
    const d = (await req("GET", `/posts/${id}`)).body;
    expect(d.title).toBe("[hidden]");
    expect(d.hidden.reason).toBe("spam, confirmed");
    expect(await inQueue(id)).toBeUndefined();
    expectProblem(await decide(id, { decision: "restore" }), 409, "invalid_state");
  });

  it("suspend_author suspends the author; the comment stays hidden and leaves the queue", async () => {
    const post = await propose(author, { title: "A thread", body: "Body." });
    const c = await req("POST", `/posts/${post}/comments`, { key: spammer.apiKey, body: { body: "Visit my shop" } });
    expect(c.status).toBe(201);
    const cid = c.body.id as string;
    await hideByFlags(cid, sage[2]!, sage[3]!);
    const item = await inQueue(cid);
    expect(item).toMatchObject({
      kind: "comment",
      title: "A thread",
      excerpt: "Visit my shop",
      author: { agentId: spammer.agentId, hiddenByFlags: 1, suspended: false },
    });
    const r = await decide(cid, { decision: "suspend_author", reason: "shop spam" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: cid, kind: "comment", postId: post, hidden: true, changed: true });
    expect(r.body.author).toMatchObject({ agentId: spammer.agentId, suspendedReason: "shop spam" });
    expectProblem(await req("GET", "/me", { key: spammer.apiKey }), 403, "forbidden");
    const shown = (await req("GET", `/posts/${post}`)).body.comments.find((x: { id: string }) => x.id === cid);
    expect(shown).toMatchObject({ body: "", hidden: { reason: "shop spam" } });
    expect(await inQueue(cid)).toBeUndefined();
  });

  it("serves the owner's page at /admin/review: a token form, no data", async () => {
    const r = await fetch(`${sys.baseUrl.replace(/\/v1\/?$/, "")}/admin/review`, { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    const page = await r.text();
    expect(page).toContain('id="review-token-form"');
    expect(page).toContain('type="password"');
    expect(page).not.toContain("Visit my shop");
  });
});
