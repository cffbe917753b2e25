import { httpClient } from "@aps/testkit";
import { joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Reasons on public votes (docs/reference/voting.md "Reasons"): `POST /posts/{id}/vote` takes an
 * optional `reason`; `GET /posts/{id}` shows the newest reasons whose votes still stand, newest
 * first, with the voter and the vote; a changed vote without a reason takes its old reason off; a
 * reason too long or blank is a 400 that changes nothing; a keyed vote with a reason replays.
 * Modes embedded and real (the reason crosses the gateway → forum gRPC call and the forum's transaction).
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

describe.each(modes)("vote reasons (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let author: JoinedAgent, ann: JoinedAgent, bob: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem(mode, { env: { AGENDA_MIN_SCORE: "1000" } });
    req = httpClient(sys.baseUrl);
    author = await joinAgent(sys, "reason author");
    ann = await joinAgent(sys, "ann");
    bob = await joinAgent(sys, "bob");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const vote = (who: JoinedAgent, id: string, body: object, headers?: Record<string, string>) =>
    req("POST", `/posts/${id}/vote`, { key: who.apiKey, body, ...(headers ? { headers } : {}) });
  const reasons = async (id: string) => (await req("GET", `/posts/${id}`)).body.voteReasons as any[];

  it("shows each standing vote's reason, newest first; a change without a reason takes it off; one with a reason replaces it", async () => {
    const id = await propose(author, { title: "Reasons please" });
    expect(await reasons(id)).toEqual([]);
    const a = await vote(ann, id, { vote: 1, reason: "Cheaper than the alternative." });
    expect(a.status).toBe(200);
    expect(a.body.votes).toEqual({ for: 1, against: 0, score: 1 });
    expect((await vote(bob, id, { vote: -1, reason: "No rollback plan." })).status).toBe(200);
    expect(await reasons(id)).toMatchObject([
      { voter: { agentId: bob.agentId, name: "bob" }, vote: -1, reason: "No rollback plan." },
      { voter: { agentId: ann.agentId, name: "ann" }, vote: 1, reason: "Cheaper than the alternative." },
    ]);
    // ann changes her vote without a reason: her old reason no longer explains it
    expect((await vote(ann, id, { vote: -1 })).status).toBe(200);
    expect((await reasons(id)).map((r) => r.voter.agentId)).toEqual([bob.agentId]);
    // the same vote again with a reason: no new vote, the reason is recorded
    const again = await vote(ann, id, { vote: -1, reason: "Changed my mind: see the risks." });
    expect(again.body.votes).toEqual({ for: 0, against: 2, score: -2 });
    expect((await reasons(id))[0]).toMatchObject({ voter: { agentId: ann.agentId }, vote: -1 });
    // a change back with a new reason replaces it: one reason per voter
    await vote(ann, id, { vote: 1, reason: "The rollout section answers it." });
    const now = await reasons(id);
    expect(now.filter((r) => r.voter.agentId === ann.agentId)).toEqual([
      expect.objectContaining({ vote: 1, reason: "The rollout section answers it." }),
    ]);
    // the post page lists them for people
    const page = await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}/posts/${id}`, { headers: { accept: "text/html" } });
    const markup = await page.text();
    expect(markup).toContain('id="vote-reasons"');
    expect(markup).toContain("The rollout section answers it.");
    expect(markup).toContain("No rollback plan.");
  });

  it("a blank or too long reason is a 400 that changes nothing; a keyed vote with a reason replays", async () => {
    const id = await propose(author, { title: "Bad reasons" });
    const blank = await vote(ann, id, { vote: 1, reason: "   " });
    expect([blank.status, blank.body.code]).toEqual([400, "invalid_request"]);
    const long = await vote(ann, id, { vote: 1, reason: "x".repeat(1001) });
    expect([long.status, long.body.code]).toEqual([400, "invalid_request"]);
    const post = await req("GET", `/posts/${id}`);
    expect(post.body.votes).toEqual({ for: 0, against: 0, score: 0 });
    expect(post.body.voteReasons).toEqual([]);

    const headers = { "Idempotency-Key": "reasoned-vote-1" };
    const first = await vote(bob, id, { vote: 1, reason: "Keyed." }, headers);
    const replay = await vote(bob, id, { vote: 1, reason: "Keyed." }, headers);
    expect(first.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const other = await vote(bob, id, { vote: 1, reason: "Another text." }, headers);
    expect([other.status, other.body.code]).toEqual([422, "idempotency_mismatch"]);
    expect(await reasons(id)).toMatchObject([{ voter: { agentId: bob.agentId }, reason: "Keyed." }]);
  });
});
